// Thin C shim over libcurl: curl_easy_setopt / curl_easy_getinfo are variadic,
// which Swift cannot call, so each argument type gets a typed wrapper.
#ifndef HLSPLAY_CCURL_SHIM_H
#define HLSPLAY_CCURL_SHIM_H

#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <netinet/tcp.h> /* TCP_INFO; not <linux/tcp.h>: its struct tcp_info clashes with Glibc's in Swift */
#include <stdint.h>
#include <string.h>
#include <stddef.h>

static inline CURLcode hls_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode hls_curl_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode hls_curl_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode hls_curl_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode hls_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
typedef size_t (*hls_curl_data_cb)(char *ptr, size_t size, size_t nmemb, void *userdata);
static inline CURLcode hls_curl_setopt_datacb(CURL *h, CURLoption o, hls_curl_data_cb v) { return curl_easy_setopt(h, o, v); }
typedef int (*hls_curl_xferinfo_cb)(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
static inline CURLcode hls_curl_setopt_xferinfocb(CURL *h, CURLoption o, hls_curl_xferinfo_cb v) { return curl_easy_setopt(h, o, v); }
typedef int (*hls_curl_sockopt_cb)(void *clientp, curl_socket_t fd, curlsocktype purpose);
static inline CURLcode hls_curl_setopt_sockoptcb(CURL *h, CURLoption o, hls_curl_sockopt_cb v) { return curl_easy_setopt(h, o, v); }

typedef int (*hls_curl_debug_cb)(CURL *handle, curl_infotype type, char *data, size_t size, void *userptr);
static inline CURLcode hls_curl_setopt_debugcb(CURL *h, CURLoption o, hls_curl_debug_cb v) { return curl_easy_setopt(h, o, v); }

static inline CURLcode hls_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode hls_curl_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode hls_curl_getinfo_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode hls_curl_getinfo_str(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }

/// The connection's socket (CURLINFO_ACTIVESOCKET), or -1.
static inline int hls_curl_active_socket(CURL *h) {
    curl_socket_t s = CURL_SOCKET_BAD;
    if (curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &s) != CURLE_OK) return -1;
    return (int)s;
}

/// The TCP_INFO fields hlsplay logs, flattened (no bitfields) for Swift.
typedef struct {
    uint32_t rttMicros;          // tcpi_rtt: smoothed RTT
    uint32_t rttVarMicros;       // tcpi_rttvar
    uint32_t totalRetransmits;   // tcpi_total_retrans
    uint32_t sendCongestionWindow; // tcpi_snd_cwnd (segments)
    uint64_t deliveryRateBytesPerSecond; // tcpi_delivery_rate (0 if the kernel does not report it)
    int deliveryRateAppLimited;  // tcpi_delivery_rate_app_limited
    int hasDeliveryRate;         // 1 when the kernel filled the field
} hls_tcp_info_t;

/// Reads TCP_INFO for a socket. Returns 0 on success, -1 (errno set) otherwise.
/// The kernel's struct tcp_info (linux/tcp.h) is mirrored locally, up to
/// tcpi_delivery_rate: including <linux/tcp.h> makes Swift see two different
/// `struct tcp_info` (Glibc's netinet/tcp.h has an older, shorter one) and
/// refuse to compile. The kernel fills min(len, its size) bytes and reports len.
static inline int hls_tcp_info(int fd, hls_tcp_info_t *out) {
    struct hls_linux_tcp_info {
        uint8_t tcpi_state, tcpi_ca_state, tcpi_retransmits, tcpi_probes, tcpi_backoff, tcpi_options;
        uint8_t tcpi_snd_wscale : 4, tcpi_rcv_wscale : 4;
        uint8_t tcpi_delivery_rate_app_limited : 1, tcpi_fastopen_client_fail : 2;
        uint32_t tcpi_rto, tcpi_ato, tcpi_snd_mss, tcpi_rcv_mss;
        uint32_t tcpi_unacked, tcpi_sacked, tcpi_lost, tcpi_retrans, tcpi_fackets;
        uint32_t tcpi_last_data_sent, tcpi_last_ack_sent, tcpi_last_data_recv, tcpi_last_ack_recv;
        uint32_t tcpi_pmtu, tcpi_rcv_ssthresh, tcpi_rtt, tcpi_rttvar, tcpi_snd_ssthresh, tcpi_snd_cwnd;
        uint32_t tcpi_advmss, tcpi_reordering, tcpi_rcv_rtt, tcpi_rcv_space, tcpi_total_retrans;
        uint64_t tcpi_pacing_rate, tcpi_max_pacing_rate, tcpi_bytes_acked, tcpi_bytes_received;
        uint32_t tcpi_segs_out, tcpi_segs_in, tcpi_notsent_bytes, tcpi_min_rtt, tcpi_data_segs_in, tcpi_data_segs_out;
        uint64_t tcpi_delivery_rate;
    } info;
    memset(&info, 0, sizeof(info));
    socklen_t len = sizeof(info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return -1;
    memset(out, 0, sizeof(*out));
    out->rttMicros = info.tcpi_rtt;
    out->rttVarMicros = info.tcpi_rttvar;
    out->totalRetransmits = info.tcpi_total_retrans;
    out->sendCongestionWindow = info.tcpi_snd_cwnd;
    size_t needed = offsetof(struct hls_linux_tcp_info, tcpi_delivery_rate) + sizeof(info.tcpi_delivery_rate);
    if (len >= needed) {
        out->deliveryRateBytesPerSecond = info.tcpi_delivery_rate;
        out->deliveryRateAppLimited = info.tcpi_delivery_rate_app_limited;
        out->hasDeliveryRate = 1;
    }
    return 0;
}

/// curl_global_init(CURL_GLOBAL_ALL): the flag macro is a compound expression Swift does not import.
static inline CURLcode hls_curl_global_init_all(void) { return curl_global_init(CURL_GLOBAL_ALL); }

/// Drains curl_multi_info_read; if a CURLMSG_DONE for `easy` was among the
/// messages, stores its result in *out and returns 1, else returns 0.
static inline int hls_curl_multi_done_result(CURLM *m, CURL *easy, CURLcode *out) {
    int found = 0;
    int left = 0;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(m, &left)) != NULL) {
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) { *out = msg->data.result; found = 1; }
    }
    return found;
}

#endif
