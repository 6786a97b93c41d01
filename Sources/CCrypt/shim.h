// Two maintained C libraries, for the web config's basic_auth_users:
// - libxcrypt (Debian: libcrypt-dev): crypt_rn checks bcrypt hashes ($2a$, $2b$, $2y$);
//   crypt_gensalt_rn makes the dummy hash an unknown user is checked against.
// - OpenSSL's libcrypto (Debian: libssl-dev; libcurl already links it): SHA-256 of a
//   (user, password) pair, the key of the cache of verified logins.
#ifndef CLOUDY_CCRYPT_SHIM_H
#define CLOUDY_CCRYPT_SHIM_H

#include <crypt.h>
#include <openssl/evp.h>

#endif
