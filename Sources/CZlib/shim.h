// zlib's init functions are macros (they pass the library version and struct size);
// Swift cannot call macros, so these inline wrappers do.
#ifndef CLOUDY_CZLIB_SHIM_H
#define CLOUDY_CZLIB_SHIM_H

#include <zlib.h>

/// A raw deflate stream (no zlib or gzip framing): Cloudy writes the gzip framing itself.
static inline int cloudy_deflate_init_raw(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}

/// An inflate stream that reads gzip framing (used by tests to read what Cloudy serves).
static inline int cloudy_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 16 + 15);
}

#endif
