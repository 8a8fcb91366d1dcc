/*
 * wipe.h - zero a secret so that the compiler cannot drop the store.
 *
 * A memset() before free() or before a buffer goes out of scope is a dead
 * store the optimiser may remove (it did: power_wol.c's SecureOn password,
 * seen in the disassembly).  tb_wipe calls memset through a volatile function
 * pointer, which the compiler must assume can do anything, so the call stays.
 * Use it for every secret a function lets go of: tokens, session and CSRF
 * secrets, passwords, request bodies that may hold them.
 *
 * No allocation, thread-safe, p may be NULL (then nothing happens).  The
 * one wipe of the tree: crypto.c and the power drivers use it too.
 */
#ifndef TB_WIPE_H
#define TB_WIPE_H

#include <stddef.h>

void tb_wipe(void *p, size_t n);

#endif /* TB_WIPE_H */
