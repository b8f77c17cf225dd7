/*
 * err.h - the error convention of libcommon.
 *
 * Synchronous calls return 0 (CM_OK) or a negative CM_E* code. Callers that
 * need a message use cm_strerror(). Allocation failure is not an error code:
 * it aborts through cm_xmalloc (see alloc.h).
 */
#ifndef CM_ERR_H
#define CM_ERR_H

enum {
    CM_OK = 0,
    CM_ERR = -1,        /* generic failure */
    CM_EINVAL = -2,     /* malformed input */
    CM_ETOOBIG = -3,    /* a size limit was exceeded */
    CM_ERANGE = -4,     /* a value is out of range */
    CM_ENOTFOUND = -5,  /* the thing asked for is not there */
    CM_EIO = -6,        /* a system or network call failed */
    CM_EAGAIN = -7,     /* not ready; try again later */
    CM_ETIMEDOUT = -8,  /* a deadline passed */
    CM_EUNAVAIL = -9,   /* a backing service cannot be reached */
    CM_ECONFLICT = -10, /* a uniqueness or reference rule refused the change */
    CM_EFORBIDDEN = -11 /* a policy refused it (an address filter against SSRF, say) */
};

const char *cm_strerror(int code);

#endif
