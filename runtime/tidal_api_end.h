/* tidal_api_end.h — closes what tidal_api_begin.h opened. No include guard. */
#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
