/* The fast path in assembly (x86-64): one macro, CS_FAST_ENTRY, expanded for every entry point of
 * every fast-path function by the generated wrappers/gen/<api>_fast.S.
 *
 * Why assembly: a C wrapper must copy a call's stack arguments into its own frame before calling
 * the real function (cuLaunchKernel has five, cublasSgemm eight), and compilers keep them in
 * callee-saved registers, which then need saving: a third of the cost of a launch. Here the
 * wrapper takes its return address off the stack (into the thread's state) and calls the real
 * function, whose return address lands where ours was: the real function finds the caller's own
 * stack arguments, and no register but rbx is needed across the call. The return address is
 * pushed back before returning, so a shadow stack (CET) sees matching calls and returns; the
 * unwind tables say where the return address and rbx are meanwhile (in the thread's state, at
 * rbx), so debuggers, crash backtraces and profilers walk through the call.
 *
 * The macro never touches an argument register, so one body fits every signature. Offsets are
 * checked against the C structures in fast_path.c.
 *
 * Sanitizer builds (CS_FAST_C) and other architectures use the C fast path in the generated C. */
#ifndef CS_FAST_ASM_H
#define CS_FAST_ASM_H

#if defined(__x86_64__) && !defined(CS_FAST_C)
#define CS_FAST_ASM 1
#else
#define CS_FAST_ASM 0
#endif

/* struct cs_thread */
#define CS_T_GATE 0
#define CS_T_DEPTH 0
#define CS_T_CURRENT 4
#define CS_T_RING 8
#define CS_T_HEAD 16
#define CS_T_RING_MASK 24
#define CS_T_LAUNCH_F 32
#define CS_T_LAUNCH_GRID 40
#define CS_T_LAUNCH_BLOCK 52
#define CS_T_SAVE_RET 64
#define CS_T_SAVE_RBX 72
#define CS_T_CALLS 1232
/* struct cs_ring: its events */
#define CS_R_EV 128
/* struct cs_event */
#define CS_E_TS 0
#define CS_E_W_CALL 8
#define CS_E_RESULT 12
#define CS_E_SEQ 16
#define CS_E_ARG 24
#define CS_E_STREAM 32
#define CS_E_W_LAUNCH 40

#if defined(__ASSEMBLER__) && CS_FAST_ASM
/* DW_CFA_expression REG: saved at [rbx + OFF] (DW_OP_breg3 OFF, a two-byte SLEB128, OFF < 8192). */
#define CS_CFI_AT_RBX(reg, off) .cfi_escape 0x10, reg, 3, 0x73, ((off) & 0x7f) | 0x80, (off) >> 7

/* NAME: the entry point. SLOW: the C entry with the same signature that the call goes to when
 * anything is unusual (the full path). VIA, IDX: constants of the event. CALL: the slot holding
 * the real function (or a resolving thunk). API: the struct cs_api. GATE: the gate bits that send
 * the call to the full path. KIND: CS_LAUNCH_KERNEL (1) for a kernel launch, whose function and
 * geometry are kept for its record (f, grid x/y/z and block x/y in registers; block z, shared
 * memory and the stream are the caller's stack arguments), else 0. */
.macro CS_FAST_ENTRY name, slow, via, idx, call, api, gate, kind
    .p2align 4
    .globl \name
    .hidden \name
    .type \name, @function
\name:
    .cfi_startproc
    movq cs_tls@gottpoff(%rip), %r11
    movq %fs:(%r11), %r11
    testl $\gate, CS_T_GATE(%r11)
    jne \slow
    movl $\idx, CS_T_CURRENT(%r11)
    movb $1, CS_T_DEPTH(%r11)
    movq %rbx, CS_T_SAVE_RBX(%r11)
    movq %r11, %rbx
    CS_CFI_AT_RBX(3, CS_T_SAVE_RBX)
    popq CS_T_SAVE_RET(%rbx)
    .cfi_def_cfa_offset 0
    CS_CFI_AT_RBX(16, CS_T_SAVE_RET)
    .if \kind
    movq %rdi, CS_T_LAUNCH_F(%rbx)
    movl %esi, CS_T_LAUNCH_GRID(%rbx)
    movl %edx, CS_T_LAUNCH_GRID+4(%rbx)
    movl %ecx, CS_T_LAUNCH_GRID+8(%rbx)
    movl %r8d, CS_T_LAUNCH_BLOCK(%rbx)
    movl %r9d, CS_T_LAUNCH_BLOCK+4(%rbx)
    .endif
    call *\call(%rip)
    movq CS_T_HEAD(%rbx), %rcx
    movq %rcx, %rdx
    andq CS_T_RING_MASK(%rbx), %rdx
    shlq $6, %rdx
    addq CS_T_RING(%rbx), %rdx
    movq cs_coarse_ticks(%rip), %r8
    movq %r8, CS_R_EV+CS_E_TS(%rdx)
    movl $(\idx | (\via << 16)), CS_R_EV+CS_E_W_CALL(%rdx)
    movl %eax, CS_R_EV+CS_E_RESULT(%rdx)
    movl %ecx, CS_R_EV+CS_E_SEQ(%rdx)
    movq $(\kind << 16), CS_R_EV+CS_E_W_LAUNCH(%rdx)
    addq $1, CS_T_CALLS+8*\idx(%rbx)
    .if \kind
    movq CS_T_LAUNCH_F(%rbx), %r8
    movq %r8, CS_R_EV+CS_E_ARG(%rdx)
    movq 16(%rsp), %r8
    movq %r8, CS_R_EV+CS_E_STREAM(%rdx)
    .endif
    testl %eax, %eax
    jne 1f
    addq $1, CS_T_HEAD(%rbx)
2:
    .cfi_remember_state
    pushq CS_T_SAVE_RET(%rbx)
    .cfi_def_cfa_offset 8
    .cfi_offset 16, -8
    movq %rbx, %r11
    movq CS_T_SAVE_RBX(%r11), %rbx
    .cfi_restore 3
    movb $0, CS_T_DEPTH(%r11)
    ret
    .cfi_restore_state
1:  /* failed: written at once, with the launch's geometry (the stack is 16-byte aligned here) */
    movq %rbx, %rdi
    leaq \api(%rip), %rsi
    leaq CS_R_EV(%rdx), %rdx
    .if \kind
    movl 0(%rsp), %ecx
    movl 8(%rsp), %r8d
    .else
    xorl %ecx, %ecx
    xorl %r8d, %r8d
    .endif
    call cs_fast_failed_asm
    jmp 2b
    .cfi_endproc
    .size \name, .-\name
.endm

/* The real function's slot holds this until the first call: IDX to the shared resolver. */
.macro CS_FAST_UNRESOLVED name, idx
    .p2align 4
    .globl \name
    .hidden \name
    .type \name, @function
\name:
    .cfi_startproc
    movl $\idx, %r11d
    jmp cs_fast_unresolved
    .cfi_endproc
    .size \name, .-\name
.endm
#endif

#endif
