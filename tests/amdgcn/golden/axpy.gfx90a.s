.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text
.globl kiln_axpy_gfx90a
.p2align 8
.type kiln_axpy_gfx90a,@function
kiln_axpy_gfx90a:
  s_load_dwordx2 s[4:5], s[0:1], 0 // argument A
  s_load_dwordx2 s[6:7], s[0:1], 8 // argument B
  s_load_dwordx2 s[8:9], s[0:1], 16 // argument Out
  s_mul_i32 s3, s2, 64
  v_add_u32 v1, s3, v0
  v_lshlrev_b32 v2, 2, v1
  s_waitcnt lgkmcnt(0)
  global_load_dword v3, v2, s[4:5]
  global_load_dword v4, v2, s[6:7]
  s_waitcnt vmcnt(1)
  v_mul_f32 v5, 0x40200000, v3
  s_waitcnt vmcnt(0)
  v_add_f32 v6, v5, v4
  global_store_dword v2, v6, s[8:9]
  s_endpgm
.Lkiln_axpy_gfx90a_end:
.size kiln_axpy_gfx90a, .Lkiln_axpy_gfx90a_end-kiln_axpy_gfx90a

.rodata
.p2align 6
.amdhsa_kernel kiln_axpy_gfx90a
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_system_sgpr_workgroup_id_y 0
  .amdhsa_system_sgpr_workgroup_id_z 0
  .amdhsa_system_vgpr_workitem_id 0
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 10
  .amdhsa_accum_offset 8
  .amdhsa_group_segment_fixed_size 0
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 1 ]
amdhsa.kernels:
  - .name: kiln_axpy_gfx90a
    .symbol: kiln_axpy_gfx90a.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 10
    .vgpr_count: 8
    .agpr_count: 0
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
