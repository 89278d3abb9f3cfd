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
 * aarch64 (below the x86-64 macros): the same design, the return address in x30 and the thread
 * in x19 across the call, kept in the thread's state; cuLaunchKernel's block z and shared memory
 * arrive in w6 and w7 there and are kept too (launch_tail).
 *
 * Sanitizer builds (CS_FAST_C) and other architectures use the C fast path in the generated C. */
#ifndef CS_FAST_ASM_H
#define CS_FAST_ASM_H

#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(CS_FAST_C)
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
#define CS_T_RING_MASK 24  /* 32 bits */
#define CS_T_WATCH 28
#define CS_T_LAUNCH 32      /* struct cs_fast_launch launch[2]: f, grid[3], block[2] */
#define CS_T_LAUNCH_SIZE 32
#define CS_T_SAVE 96        /* save[2]: ret, rbx (aarch64: x30, x19) */
#if defined(__aarch64__)
#define CS_T_TAIL 128       /* launch_tail[2]: block z, shared memory */
#define CS_T_CALLS 1296
#else
#define CS_T_CALLS 1280
#endif
/* struct cs_ring: its events */
#define CS_R_EV 128
/* struct cs_event */
#define CS_E_TS 0
#define CS_E_W_CALL 8
#define CS_E_RESULT 12
#define CS_E_ARG 24
#define CS_E_STREAM 32
#define CS_E_W_LAUNCH 40
/* CUlaunchConfig: its stream */
#define CS_CONFIG_STREAM 32

#if defined(__ASSEMBLER__) && CS_FAST_ASM && defined(__x86_64__)
/* DW_CFA_expression REG: saved at [rbx + OFF] (DW_OP_breg3 OFF, a two-byte SLEB128, OFF < 8192). */
#define CS_CFI_AT_RBX(reg, off) .cfi_escape 0x10, reg, 3, 0x73, ((off) & 0x7f) | 0x80, (off) >> 7

/* A function of the shim's own (hidden), its unwind information begun. */
.macro CS_FAST_FUNCTION name
    .p2align 4
    .globl \name
    .hidden \name
    .type \name, @function
\name:
    .cfi_startproc
.endm

/* NAME: the entry point. SLOW: the C entry with the same signature that the call goes to when
 * anything is unusual (the full path). VIA, IDX: constants of the event. CALL: the slot holding
 * the real function (or a resolving thunk). API: the struct cs_api. WATCHED: 1 for a library
 * call, which takes the full path while the hang watchdog runs. SHAPE: 0 for a call that is not a
 * kernel launch; 1 for cuLaunchKernel's arguments, whose function and geometry are kept for the
 * launch's record (f, grid x/y/z and block x/y in registers; block z, shared memory and the
 * stream are the caller's stack arguments); 2 for cuLaunchKernelEx's (configuration, function):
 * both kept, the stream read from the configuration after the call, the geometry only when it
 * failed (cs_fast_launch_ex_failed); 3 for a call whose hook acts only when it failed: its first
 * four arguments kept, and ONFAIL (generated, cs_ff_*) runs the hook with them.
 *
 * Two bodies: the outermost call (nothing in progress on the thread), and a call made inside
 * one (NAME_nested: the CUDA runtime's cuLaunchKernel inside cudaLaunchKernel, cuBLAS's driver
 * calls), each with its own saved registers and launch arguments. Deeper calls take the full path. */
.macro CS_FAST_ENTRY name, slow, via, idx, call, api, watched, shape, onfail=cs_fast_failed_asm
    CS_FAST_FUNCTION \name
    movq cs_tls@gottpoff(%rip), %r11
    movq %fs:(%r11), %r11
    cmpl $1, CS_T_GATE(%r11)
    jae \name\()_nested
    .if \watched
    cmpb $0, CS_T_WATCH(%r11)
    jne \slow
    .endif
    movl $\idx, CS_T_CURRENT(%r11)
    movb $1, CS_T_DEPTH(%r11)
    CS_FAST_BODY 0, \via, \idx, \call, \api, \shape, \onfail
    .cfi_endproc
    .size \name, .-\name

    .p2align 4
    .type \name\()_nested, @function
\name\()_nested:  /* r11: the thread; flags: its gate against 1 (one call in progress, not hidden, no mode) */
    .cfi_startproc
    jne \slow
    movb $2, CS_T_DEPTH(%r11)
    CS_FAST_BODY 1, \via, \idx, \call, \api, \shape, \onfail
    .cfi_endproc
    .size \name\()_nested, .-\name\()_nested
.endm

/* From the call in progress (r11: the thread) to the return; LEVEL 0 or 1 picks the saved
 * registers, the launch arguments, the "inside" field and the depth to go back to. The depth is
 * raised before a level's saved registers are written and lowered only after they are read back,
 * so a CUDA call from a signal handler meanwhile never takes the same level (it takes the next
 * one, or the full path, or finishes before they are written). */
.macro CS_FAST_BODY level, via, idx, call, api, shape, onfail
    .if \shape == 1 || \shape == 2
    .set .Lkind, 1  /* CS_LAUNCH_KERNEL */
    .else
    .set .Lkind, 0
    .endif
    movq %rbx, CS_T_SAVE+16*\level+8(%r11)
    movq %r11, %rbx
    CS_CFI_AT_RBX(3, CS_T_SAVE+16*\level+8)
    popq CS_T_SAVE+16*\level(%rbx)
    .cfi_def_cfa_offset 0
    CS_CFI_AT_RBX(16, CS_T_SAVE+16*\level)
    .if \shape == 2
    movq %rdi, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level(%rbx)
    movq %rsi, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level+8(%rbx)
    .endif
    .if \shape == 3
    movq %rdi, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level(%rbx)
    movq %rsi, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level+8(%rbx)
    movq %rdx, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level+16(%rbx)
    movq %rcx, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level+24(%rbx)
    .endif
    .if \shape == 1
    movq %rdi, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level(%rbx)
    movl %esi, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level+8(%rbx)
    movl %edx, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level+12(%rbx)
    movl %ecx, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level+16(%rbx)
    movl %r8d, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level+20(%rbx)
    movl %r9d, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level+24(%rbx)
    .endif
    call *\call(%rip)
    movq CS_T_HEAD(%rbx), %rdx
    andl CS_T_RING_MASK(%rbx), %edx
    shlq $6, %rdx
    addq CS_T_RING(%rbx), %rdx
    movq cs_coarse_ticks(%rip), %r8
    movq %r8, CS_R_EV+CS_E_TS(%rdx)
    movl $(\idx | (\via << 16)), CS_R_EV+CS_E_W_CALL(%rdx)
    movl %eax, CS_R_EV+CS_E_RESULT(%rdx)
    .if \level
    movl CS_T_CURRENT(%rbx), %r8d  /* inside: 1 + the outermost call; kind; no duration */
    addl $(1 + (.Lkind << 16)), %r8d
    movq %r8, CS_R_EV+CS_E_W_LAUNCH(%rdx)
    .else
    movq $(.Lkind << 16), CS_R_EV+CS_E_W_LAUNCH(%rdx)
    .endif
    addq $1, CS_T_CALLS+8*\idx(%rbx)
    .if \shape == 1
    movq CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level(%rbx), %r8
    movq %r8, CS_R_EV+CS_E_ARG(%rdx)
    movq 16(%rsp), %r8
    movq %r8, CS_R_EV+CS_E_STREAM(%rdx)
    .endif
    .if \shape == 2
    movq CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level+8(%rbx), %r8
    movq %r8, CS_R_EV+CS_E_ARG(%rdx)
    movq CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level(%rbx), %r8  /* the configuration: its stream, unless NULL */
    testq %r8, %r8
    jz 3f
    movq CS_CONFIG_STREAM(%r8), %r8
3:
    movq %r8, CS_R_EV+CS_E_STREAM(%rdx)
    .endif
    testl %eax, %eax
    jne 1f
    addq $1, CS_T_HEAD(%rbx)
2:
    .cfi_remember_state
    pushq CS_T_SAVE+16*\level(%rbx)
    .cfi_def_cfa_offset 8
    .cfi_offset 16, -8
    movq %rbx, %r11
    movq CS_T_SAVE+16*\level+8(%r11), %rbx
    .cfi_restore 3
    movb $\level, CS_T_DEPTH(%r11)
    ret
    .cfi_restore_state
1:  /* failed: written at once, with the launch's geometry (the stack is 16-byte aligned here) */
    movq %rbx, %rdi
    leaq \api(%rip), %rsi
    leaq CS_R_EV(%rdx), %rdx
    .if \shape == 2
    call cs_fast_failed_ex_asm
    .elseif \shape == 3
    call \onfail
    .else
    .if \shape == 1
    movl 0(%rsp), %ecx
    movl 8(%rsp), %r8d
    .else
    xorl %ecx, %ecx
    xorl %r8d, %r8d
    .endif
    call cs_fast_failed_asm
    .endif
    jmp 2b
.endm

/* The real function's slot holds this until the first call: IDX to the shared resolver. */
.macro CS_FAST_UNRESOLVED name, idx
    CS_FAST_FUNCTION \name
    movl $\idx, %r11d
    jmp cs_fast_unresolved
    .cfi_endproc
    .size \name, .-\name
.endm
#endif

#if defined(__ASSEMBLER__) && CS_FAST_ASM && defined(__aarch64__)
/* DW_CFA_expression REG: saved at [x19 + OFF] (DW_OP_breg19 OFF, a two-byte SLEB128, OFF < 8192). */
#define CS_CFI_AT_X19(reg, off) .cfi_escape 0x10, reg, 3, 0x83, ((off) & 0x7f) | 0x80, (off) >> 7

.macro CS_FAST_FUNCTION name
    .p2align 4
    .globl \name
    .hidden \name
    .type \name, %function
\name:
    .cfi_startproc
.endm

/* As on x86-64 (above); x16 and x17, the scratch registers of a call, hold the thread and a
 * value until the body begins; no argument register is touched before the real call. */
.macro CS_FAST_ENTRY name, slow, via, idx, call, api, watched, shape, onfail=cs_fast_failed_asm
    CS_FAST_FUNCTION \name
    adrp x16, :gottprel:cs_tls
    ldr x16, [x16, :gottprel_lo12:cs_tls]
    mrs x17, tpidr_el0
    ldr x16, [x17, x16]
    ldr w17, [x16, #CS_T_GATE]
    cmp w17, #1
    b.hs \name\()_nested
    .if \watched  /* (a conditional branch reaches 1 MB; the slow entry may be farther) */
    ldrb w17, [x16, #CS_T_WATCH]
    cbz w17, 4f
    b \slow
4:
    .endif
    mov w17, #\idx
    str w17, [x16, #CS_T_CURRENT]
    mov w17, #1
    strb w17, [x16, #CS_T_DEPTH]
    CS_FAST_BODY 0, \via, \idx, \call, \api, \shape, \onfail
    .cfi_endproc
    .size \name, .-\name

    .p2align 4
    .type \name\()_nested, %function
\name\()_nested:  /* x16: the thread; flags: its gate against 1 */
    .cfi_startproc
    b.eq 4f
    b \slow
4:
    mov w17, #2
    strb w17, [x16, #CS_T_DEPTH]
    CS_FAST_BODY 1, \via, \idx, \call, \api, \shape, \onfail
    .cfi_endproc
    .size \name\()_nested, .-\name\()_nested
.endm

.macro CS_FAST_BODY level, via, idx, call, api, shape, onfail
    .if \shape == 1 || \shape == 2
    .set .Lkind, 1  /* CS_LAUNCH_KERNEL */
    .else
    .set .Lkind, 0
    .endif
    .set .Llaunch, CS_T_LAUNCH+CS_T_LAUNCH_SIZE*\level
    .set .Lsave, CS_T_SAVE+16*\level
    stp x30, x19, [x16, #.Lsave]  /* save: ret, then the register */
    mov x19, x16
    CS_CFI_AT_X19(19, .Lsave+8)
    CS_CFI_AT_X19(30, .Lsave)
    .if \shape == 2
    stp x0, x1, [x19, #.Llaunch]
    .endif
    .if \shape == 3
    stp x0, x1, [x19, #.Llaunch]
    stp x2, x3, [x19, #.Llaunch+16]
    .endif
    .if \shape == 1
    str x0, [x19, #.Llaunch]
    stp w1, w2, [x19, #.Llaunch+8]
    stp w3, w4, [x19, #.Llaunch+16]
    str w5, [x19, #.Llaunch+24]
    stp w6, w7, [x19, #CS_T_TAIL+8*\level]
    .endif
    adrp x16, \call
    ldr x16, [x16, :lo12:\call]
    blr x16
    ldr x5, [x19, #CS_T_HEAD]
    ldr w3, [x19, #CS_T_RING_MASK]
    and x2, x5, x3
    ldr x3, [x19, #CS_T_RING]
    add x2, x3, x2, lsl #6  /* the event's slot, CS_R_EV before the event */
    adrp x3, cs_coarse_ticks
    ldr x3, [x3, :lo12:cs_coarse_ticks]
    str x3, [x2, #CS_R_EV+CS_E_TS]
    movz w3, #\idx
    .if \via
    movk w3, #\via, lsl #16
    .endif
    stp w3, w0, [x2, #CS_R_EV+CS_E_W_CALL]
    .if \level
    ldr w3, [x19, #CS_T_CURRENT]  /* inside: 1 + the outermost call; kind; no duration */
    add w3, w3, #1
    .if .Lkind
    add w3, w3, #(.Lkind << 4), lsl #12
    .endif
    str x3, [x2, #CS_R_EV+CS_E_W_LAUNCH]
    .else
    .if .Lkind
    mov x3, #(.Lkind << 16)
    str x3, [x2, #CS_R_EV+CS_E_W_LAUNCH]
    .else
    str xzr, [x2, #CS_R_EV+CS_E_W_LAUNCH]
    .endif
    .endif
    ldr x3, [x19, #CS_T_CALLS+8*\idx]
    add x3, x3, #1
    str x3, [x19, #CS_T_CALLS+8*\idx]
    .if \shape == 1
    ldr x3, [x19, #.Llaunch]
    str x3, [x2, #CS_R_EV+CS_E_ARG]
    ldr x3, [sp]  /* the stream: the ninth argument, the caller's first stack slot */
    str x3, [x2, #CS_R_EV+CS_E_STREAM]
    .endif
    .if \shape == 2
    ldp x3, x4, [x19, #.Llaunch]
    str x4, [x2, #CS_R_EV+CS_E_ARG]
    cbz x3, 3f  /* the configuration: its stream, unless NULL */
    ldr x3, [x3, #CS_CONFIG_STREAM]
3:
    str x3, [x2, #CS_R_EV+CS_E_STREAM]
    .endif
    cbnz w0, 1f
    add x5, x5, #1
    add x4, x19, #CS_T_HEAD
    stlr x5, [x4]  /* published after the event's stores (x86-64's stores are ordered already) */
2:
    .cfi_remember_state
    mov x16, x19
    ldp x30, x19, [x16, #.Lsave]
    .cfi_restore 30
    .cfi_restore 19
    .if \level
    mov w17, #\level
    strb w17, [x16, #CS_T_DEPTH]
    .else
    strb wzr, [x16, #CS_T_DEPTH]
    .endif
    ret
    .cfi_restore_state
1:  /* failed: written at once, with the launch's geometry */
    add x2, x2, #CS_R_EV
    mov x0, x19
    adrp x1, \api
    add x1, x1, :lo12:\api
    .if \shape == 2
    bl cs_fast_failed_ex_asm
    .elseif \shape == 3
    bl \onfail
    .else
    .if \shape == 1
    ldp w3, w4, [x19, #CS_T_TAIL+8*\level]
    .else
    mov w3, wzr
    mov w4, wzr
    .endif
    bl cs_fast_failed_asm
    .endif
    b 2b
.endm

/* The real function's slot holds this until the first call: IDX (in w16) to the shared resolver. */
.macro CS_FAST_UNRESOLVED name, idx
    CS_FAST_FUNCTION \name
    mov w16, #\idx
    b cs_fast_unresolved
    .cfi_endproc
    .size \name, .-\name
.endm
#endif

#endif
