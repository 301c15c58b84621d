// Thin C shim over FFmpeg for Swift. Only what Swift cannot express:
// function-like macros become static inline helpers.
#ifndef HLSPLAY_CFFMPEG_SHIM_H
#define HLSPLAY_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/aes.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libavutil/channel_layout.h>
#include <libswresample/swresample.h>

/// AVERROR(e) for a POSIX errno value.
static inline int hls_averror(int posixError) { return AVERROR(posixError); }
/// AVERROR(EAGAIN): "output not available in this state; send more input".
static inline int hls_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: end of stream.
static inline int hls_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR_INVALIDDATA: corrupt input.
static inline int hls_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
/// AV_NOPTS_VALUE: "no timestamp".
static inline int64_t hls_nopts_value(void) { return AV_NOPTS_VALUE; }
/// AV_PKT_FLAG_KEY.
static inline int hls_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }
/// AV_PKT_FLAG_CORRUPT: the demuxer knows this packet is damaged.
static inline int hls_pkt_flag_corrupt(void) { return AV_PKT_FLAG_CORRUPT; }
/// AVSEEK_SIZE: the whence value asking a seek callback for the total size.
static inline int hls_avseek_size(void) { return AVSEEK_SIZE; }
/// AVSEEK_FORCE: a flag FFmpeg may OR into whence; callbacks ignore it.
static inline int hls_avseek_force(void) { return AVSEEK_FORCE; }
/// AV_LOG_* levels carry colour bits above the low byte; this strips them.
static inline int hls_log_level_mask(int level) { return level & 0xff; }
/// av_q2d without the inline-struct-by-value awkwardness.
static inline double hls_q2d(AVRational r) { return av_q2d(r); }
/// Formats an FFmpeg error code into buf; returns buf.
static inline const char *hls_av_err2str(int code, char *buf, size_t size) {
    av_strerror(code, buf, size);
    return buf;
}

#endif
