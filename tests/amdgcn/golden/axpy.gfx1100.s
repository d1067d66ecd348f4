.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
.text
.globl kiln_axpy_gfx1100
.p2align 8
.type kiln_axpy_gfx1100,@function
kiln_axpy_gfx1100:
  s_load_b64 s[4:5], s[0:1], 0 // argument A
  s_load_b64 s[6:7], s[0:1], 8 // argument B
  s_load_b64 s[8:9], s[0:1], 16 // argument Out
  s_mul_i32 s3, s2, 64
  v_add_nc_u32 v1, s3, v0
  v_lshlrev_b32 v2, 2, v1
  s_waitcnt lgkmcnt(0)
  global_load_b32 v3, v2, s[4:5]
  global_load_b32 v4, v2, s[6:7]
  s_waitcnt vmcnt(1)
  v_mul_f32 v5, 0x40200000, v3
  s_waitcnt vmcnt(0)
  v_add_f32 v6, v5, v4
  global_store_b32 v2, v6, s[8:9]
  s_endpgm
.Lkiln_axpy_gfx1100_end:
.size kiln_axpy_gfx1100, .Lkiln_axpy_gfx1100_end-kiln_axpy_gfx1100

.rodata
.p2align 6
.amdhsa_kernel kiln_axpy_gfx1100
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_system_sgpr_workgroup_id_y 0
  .amdhsa_system_sgpr_workgroup_id_z 0
  .amdhsa_system_vgpr_workitem_id 0
  .amdhsa_next_free_vgpr 7
  .amdhsa_next_free_sgpr 10
  .amdhsa_wavefront_size32 1
  .amdhsa_group_segment_fixed_size 0
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 1 ]
amdhsa.kernels:
  - .name: kiln_axpy_gfx1100
    .symbol: kiln_axpy_gfx1100.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .sgpr_count: 10
    .vgpr_count: 7
    .max_flat_workgroup_size: 64
    .args:
      - .name: !str 'A'
        .size: 8
        .offset: 0
        .value_kind: global_buffer
        .address_space: global
      - .name: !str 'B'
        .size: 8
        .offset: 8
        .value_kind: global_buffer
        .address_space: global
      - .name: !str 'Out'
        .size: 8
        .offset: 16
        .value_kind: global_buffer
        .address_space: global
...
.end_amdgpu_metadata
