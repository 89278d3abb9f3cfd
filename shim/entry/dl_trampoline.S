/* Exported dlsym, dlvsym and dlopen: save the arguments, ask the router for a target, restore the
 * arguments and jump. The jump keeps the program's return address on the stack, so glibc sees
 * the program, not the shim, as the caller: a guaranteed tail call that no C compiler flag
 * can undo. */
#if defined(__x86_64__)
    .text
    /* One body, exported as dlsym@GLIBC_2.2.5 (old binaries, libcudart) and dlsym@@GLIBC_2.34. */
    .symver cs_dlsym_v1, dlsym@GLIBC_2.2.5
    .symver cs_dlsym_v2, dlsym@@GLIBC_2.34
    .symver cs_dlvsym_v1, dlvsym@GLIBC_2.2.5
    .symver cs_dlvsym_v2, dlvsym@@GLIBC_2.34
    .globl cs_dlsym_v1, cs_dlsym_v2, cs_dlvsym_v1, cs_dlvsym_v2
    .type cs_dlsym_v1, @function
    .type cs_dlsym_v2, @function
cs_dlsym_v1:
cs_dlsym_v2:
    .cfi_startproc
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    call cs_dlsym_route
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    jmp *%rax
    .cfi_endproc
    .size cs_dlsym_v1, .-cs_dlsym_v1
    .size cs_dlsym_v2, .-cs_dlsym_v2

    .type cs_dlvsym_v1, @function
    .type cs_dlvsym_v2, @function
cs_dlvsym_v1:
cs_dlvsym_v2:
    .cfi_startproc
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    pushq %rdx
    .cfi_adjust_cfa_offset 8
    call cs_dlvsym_route
    popq %rdx
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    jmp *%rax
    .cfi_endproc
    .size cs_dlvsym_v1, .-cs_dlvsym_v1
    .size cs_dlvsym_v2, .-cs_dlvsym_v2

    .symver cs_dlopen_v1, dlopen@GLIBC_2.2.5
    .symver cs_dlopen_v2, dlopen@@GLIBC_2.34
    .globl cs_dlopen_v1, cs_dlopen_v2
    .type cs_dlopen_v1, @function
    .type cs_dlopen_v2, @function
cs_dlopen_v1:
cs_dlopen_v2:
    .cfi_startproc
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    movq 24(%rsp), %rdx
    call cs_dlopen_route
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    jmp *%rax
    .cfi_endproc
    .size cs_dlopen_v1, .-cs_dlopen_v1
    .size cs_dlopen_v2, .-cs_dlopen_v2

#elif defined(__aarch64__)
    .text
    .symver cs_dlsym_v1, dlsym@GLIBC_2.17
    .symver cs_dlsym_v2, dlsym@@GLIBC_2.34
    .symver cs_dlvsym_v1, dlvsym@GLIBC_2.17
    .symver cs_dlvsym_v2, dlvsym@@GLIBC_2.34
    .globl cs_dlsym_v1, cs_dlsym_v2, cs_dlvsym_v1, cs_dlvsym_v2
    .type cs_dlsym_v1, %function
    .type cs_dlsym_v2, %function
cs_dlsym_v1:
cs_dlsym_v2:
    stp x29, x30, [sp, #-32]!
    mov x29, sp
    stp x0, x1, [sp, #16]
    bl cs_dlsym_route
    mov x16, x0
    ldp x0, x1, [sp, #16]
    ldp x29, x30, [sp], #32
    br x16
    .size cs_dlsym_v1, .-cs_dlsym_v1

    .type cs_dlvsym_v1, %function
    .type cs_dlvsym_v2, %function
cs_dlvsym_v1:
cs_dlvsym_v2:
    stp x29, x30, [sp, #-48]!
    mov x29, sp
    stp x0, x1, [sp, #16]
    str x2, [sp, #32]
    bl cs_dlvsym_route
    mov x16, x0
    ldp x0, x1, [sp, #16]
    ldr x2, [sp, #32]
    ldp x29, x30, [sp], #48
    br x16
    .size cs_dlvsym_v1, .-cs_dlvsym_v1
    .symver cs_dlopen_v1, dlopen@GLIBC_2.17
    .symver cs_dlopen_v2, dlopen@@GLIBC_2.34
    .globl cs_dlopen_v1, cs_dlopen_v2
    .type cs_dlopen_v1, %function
    .type cs_dlopen_v2, %function
cs_dlopen_v1:
cs_dlopen_v2:
    stp x29, x30, [sp, #-32]!
    mov x29, sp
    stp x0, x1, [sp, #16]
    mov x2, x30
    bl cs_dlopen_route
    mov x16, x0
    ldp x0, x1, [sp, #16]
    ldp x29, x30, [sp], #32
    br x16
    .size cs_dlopen_v1, .-cs_dlopen_v1
#endif
    .section .note.GNU-stack, "", %progbits
