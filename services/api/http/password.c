/*
 * password.c - user passwords as argon2id (libargon2), in its encoded form
 * ($argon2id$v=19$m=19456,t=2,p=1$salt$hash), which carries its own
 * parameters so they can be raised later without breaking stored hashes.
 * 19 MiB and 2 passes is OWASP's current minimum for argon2id. Hashing
 * takes tens of milliseconds: request paths call it on the thread pool.
 */
#include <argon2.h>
#include <string.h>

#include "cm/err.h"
#include "cm/uuid.h"
#include "http/http.h"

#define T_COST   2
#define M_COST   19456
#define PARALLEL 1
#define SALT_LEN 16
#define HASH_LEN 32

int api_password_hash(const char *password, char *out, size_t size)
{
    uint8_t salt[SALT_LEN];
    cm_random_bytes(salt, sizeof(salt));
    int rc = argon2id_hash_encoded(T_COST, M_COST, PARALLEL, password, strlen(password), salt,
                                   sizeof(salt), HASH_LEN, out, size);
    return rc == ARGON2_OK ? CM_OK : CM_EINVAL;
}

bool api_password_check(const char *encoded, const char *password)
{
    return argon2id_verify(encoded, password, strlen(password)) == ARGON2_OK;
}
