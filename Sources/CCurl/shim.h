// Typed wrappers around libcurl's variadic functions: Swift cannot call C variadics,
// so each option type gets a small inline function (the same trick swift-corelibs-foundation uses).
#ifndef CLOUDY_CCURL_SHIM_H
#define CLOUDY_CCURL_SHIM_H

#include <curl/curl.h>

static inline CURLcode cloudy_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cloudy_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cloudy_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cloudy_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cloudy_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*cloudy_curl_data_callback)(char *data, size_t size, size_t count, void *userdata);
typedef int (*cloudy_curl_progress_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                              curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode cloudy_curl_setopt_data_callback(CURL *handle, CURLoption option, cloudy_curl_data_callback cb) {
    return curl_easy_setopt(handle, option, cb);
}

static inline CURLcode cloudy_curl_setopt_progress_callback(CURL *handle, cloudy_curl_progress_callback cb) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, cb);
}

static inline CURLcode cloudy_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode cloudy_curl_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode cloudy_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

#endif
