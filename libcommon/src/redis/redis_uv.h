/*
 * redis_uv.h - libcommon-internal: the libuv event adapter for hiredis
 * async contexts (redis_uv.c). Replaces hiredis's adapters/libuv.h.
 */
#ifndef CM_REDIS_UV_H
#define CM_REDIS_UV_H

#include <async.h>
#include <uv.h>

/* Attaches ac to loop; REDIS_OK or REDIS_ERR. hiredis's ev.cleanup detaches
 * and frees the adapter when the context is freed. */
int cm__redis_uv_attach(redisAsyncContext *ac, uv_loop_t *loop);

#endif
