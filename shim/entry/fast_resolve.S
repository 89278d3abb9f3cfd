/* The assembly fast path's resolving thunk (fast_asm.h): reached through a real-function slot,
 * in place of the real function, with the program's arguments in place. */
#include "fast_asm.h"
#if CS_FAST_ASM && defined(__x86_64__)
    .text
/* First call of a function (r11d: its global index): resolve it (cs_fast_resolve, which caches
 * it in the slot) and jump to it with every argument register as it came. */
    .p2align 4
    .globl cs_fast_unresolved
    .hidden cs_fast_unresolved
    .type cs_fast_unresolved, @function
cs_fast_unresolved:
    .cfi_startproc
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    pushq %rdx
    .cfi_adjust_cfa_offset 8
    pushq %rcx
    .cfi_adjust_cfa_offset 8
    pushq %r8
    .cfi_adjust_cfa_offset 8
    pushq %r9
    .cfi_adjust_cfa_offset 8
    pushq %rax
    .cfi_adjust_cfa_offset 8
    subq $128, %rsp
    .cfi_adjust_cfa_offset 128
    movdqu %xmm0, 0(%rsp)
    movdqu %xmm1, 16(%rsp)
    movdqu %xmm2, 32(%rsp)
    movdqu %xmm3, 48(%rsp)
    movdqu %xmm4, 64(%rsp)
    movdqu %xmm5, 80(%rsp)
    movdqu %xmm6, 96(%rsp)
    movdqu %xmm7, 112(%rsp)
    movl %r11d, %edi
    call cs_fast_resolve
    movq %rax, %r11
    movdqu 0(%rsp), %xmm0
    movdqu 16(%rsp), %xmm1
    movdqu 32(%rsp), %xmm2
    movdqu 48(%rsp), %xmm3
    movdqu 64(%rsp), %xmm4
    movdqu 80(%rsp), %xmm5
    movdqu 96(%rsp), %xmm6
    movdqu 112(%rsp), %xmm7
    addq $128, %rsp
    .cfi_adjust_cfa_offset -128
    popq %rax
    .cfi_adjust_cfa_offset -8
    popq %r9
    .cfi_adjust_cfa_offset -8
    popq %r8
    .cfi_adjust_cfa_offset -8
    popq %rcx
    .cfi_adjust_cfa_offset -8
    popq %rdx
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    jmp *%r11
    .cfi_endproc
    .size cs_fast_unresolved, .-cs_fast_unresolved

#elif CS_FAST_ASM && defined(__aarch64__)
    .text
/* The same on aarch64 (w16: the index; x30: the return into the entry point, kept): every
 * argument register (x0-x7, x8 for a returned structure, q0-q7) saved around the resolver. */
    .p2align 4
    .globl cs_fast_unresolved
    .hidden cs_fast_unresolved
    .type cs_fast_unresolved, %function
cs_fast_unresolved:
    .cfi_startproc
    stp x29, x30, [sp, #-224]!
    .cfi_def_cfa_offset 224
    .cfi_offset 29, -224
    .cfi_offset 30, -216
    mov x29, sp
    stp x0, x1, [sp, #16]
    stp x2, x3, [sp, #32]
    stp x4, x5, [sp, #48]
    stp x6, x7, [sp, #64]
    str x8, [sp, #80]
    stp q0, q1, [sp, #96]
    stp q2, q3, [sp, #128]
    stp q4, q5, [sp, #160]
    stp q6, q7, [sp, #192]
    mov w0, w16
    bl cs_fast_resolve
    mov x16, x0
    ldp q6, q7, [sp, #192]
    ldp q4, q5, [sp, #160]
    ldp q2, q3, [sp, #128]
    ldp q0, q1, [sp, #96]
    ldr x8, [sp, #80]
    ldp x6, x7, [sp, #64]
    ldp x4, x5, [sp, #48]
    ldp x2, x3, [sp, #32]
    ldp x0, x1, [sp, #16]
    ldp x29, x30, [sp], #224
    .cfi_def_cfa_offset 0
    .cfi_restore 29
    .cfi_restore 30
    br x16
    .cfi_endproc
    .size cs_fast_unresolved, .-cs_fast_unresolved

#endif
    .section .note.GNU-stack, "", %progbits
