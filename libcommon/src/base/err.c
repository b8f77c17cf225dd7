/* err.c - messages for the CM_E* codes. */
#include "cm/err.h"

const char *cm_strerror(int code)
{
    switch (code) {
    case CM_OK: return "ok";
    case CM_ERR: return "error";
    case CM_EINVAL: return "invalid input";
    case CM_ETOOBIG: return "size limit exceeded";
    case CM_ERANGE: return "value out of range";
    case CM_ENOTFOUND: return "not found";
    case CM_EIO: return "i/o error";
    case CM_EAGAIN: return "try again";
    case CM_ETIMEDOUT: return "timed out";
    case CM_EUNAVAIL: return "unavailable";
    case CM_ECONFLICT: return "conflict";
    case CM_EFORBIDDEN: return "forbidden by policy";
    default: return "unknown error";
    }
}
