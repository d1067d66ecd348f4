.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.text
.globl kiln_sum4
.p2align 8
.type kiln_sum4,@function
kiln_sum4:
  s_load_dwordx2 s[4:5], s[0:1], 0 // argument A
  s_load_dwordx2 s[6:7], s[0:1], 8 // argument B
  s_load_dwordx2 s[8:9], s[0:1], 16 // argument Out
  s_mul_i32 s3, s2, 0x100
  v_add_u32 v1, s3, v0
  v_lshlrev_b32 v2, 1, v1
  s_waitcnt lgkmcnt(0)
  global_load_ushort v3, v2, s[4:5]
  global_load_ushort v11, v2, s[4:5] offset:128
  global_load_ushort v19, v2, s[4:5] offset:256
  global_load_ushort v27, v2, s[4:5] offset:384
  s_waitcnt vmcnt(3)
  v_cvt_f32_f16 v4, v3
  global_load_ushort v5, v2, s[6:7]
  s_waitcnt vmcnt(3)
  v_cvt_f32_f16 v12, v11
  global_load_ushort v13, v2, s[6:7] offset:128
  s_waitcnt vmcnt(3)
  v_cvt_f32_f16 v20, v19
  global_load_ushort v21, v2, s[6:7] offset:256
  s_waitcnt vmcnt(3)
  v_cvt_f32_f16 v28, v27
  global_load_ushort v29, v2, s[6:7] offset:384
  s_waitcnt vmcnt(3)
  v_cvt_f32_f16 v6, v5
  v_add_f32 v7, v4, v6
  v_cvt_f16_f32 v8, v7
  v_cvt_f32_f16 v9, v8
  v_cvt_f16_f32 v10, v9
  global_store_short v2, v10, s[8:9]
  s_waitcnt vmcnt(3)
  v_cvt_f32_f16 v14, v13
  v_add_f32 v15, v12, v14
  v_cvt_f16_f32 v16, v15
  v_cvt_f32_f16 v17, v16
  v_cvt_f16_f32 v18, v17
  global_store_short v2, v18, s[8:9] offset:128
  s_waitcnt vmcnt(3)
  v_cvt_f32_f16 v22, v21
  v_add_f32 v23, v20, v22
  v_cvt_f16_f32 v24, v23
  v_cvt_f32_f16 v25, v24
  v_cvt_f16_f32 v26, v25
  global_store_short v2, v26, s[8:9] offset:256
  s_waitcnt vmcnt(3)
  v_cvt_f32_f16 v30, v29
  v_add_f32 v31, v28, v30
  v_cvt_f16_f32 v32, v31
  v_cvt_f32_f16 v33, v32
  v_cvt_f16_f32 v34, v33
  global_store_short v2, v34, s[8:9] offset:384
  s_endpgm
.Lkiln_sum4_end:
.size kiln_sum4, .Lkiln_sum4_end-kiln_sum4

.rodata
.p2align 6
.amdhsa_kernel kiln_sum4
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_system_sgpr_workgroup_id_y 0
  .amdhsa_system_sgpr_workgroup_id_z 0
  .amdhsa_system_vgpr_workitem_id 0
  .amdhsa_next_free_vgpr 36
  .amdhsa_next_free_sgpr 10
  .amdhsa_accum_offset 36
  .amdhsa_group_segment_fixed_size 0
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 1 ]
amdhsa.kernels:
  - .name: kiln_sum4
    .symbol: kiln_sum4.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 10
    .vgpr_count: 36
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
