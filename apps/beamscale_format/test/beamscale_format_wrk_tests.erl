-module(beamscale_format_wrk_tests).
-include_lib("eunit/include/eunit.hrl").

output() ->
    "Running 3s test @ http://127.0.0.1:40123/\n"
    "  1 threads and 50 connections\n"
    "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n"
    "    Latency   812.50us  300.10us  12.00ms   91.20%\n"
    "    Req/Sec    30.51k     1.20k   33.00k    70.00%\n"
    "  Latency Distribution\n"
    "     50%  750.00us\n"
    "     75%    0.90ms\n"
    "     90%    1.10ms\n"
    "     99%    1.50s\n"
    "  91530 requests in 3.00s, 9.60MB read\n"
    "  Socket errors: connect 0, read 2, write 0, timeout 1\n"
    "Requests/sec:  30510.42\n"
    "Transfer/sec:      3.20MB\n".

parse_test() ->
    {ok, F} = beamscale_format_wrk:parse(output()),
    ?assertEqual(30510.42, maps:get(requests_per_s, F)),
    ?assertEqual(91530, maps:get(requests, F)),
    ?assert(abs(maps:get(mean_ms, F) - 0.8125) < 1.0e-9),
    ?assert(abs(maps:get(p50_ms, F) - 0.75) < 1.0e-9),
    ?assertEqual(1.1, maps:get(p90_ms, F)),
    ?assertEqual(1500.0, maps:get(p99_ms, F)),
    ?assertEqual(3, maps:get(socket_errors, F)).

no_result_test() ->
    ?assertEqual({error, no_result},
                 beamscale_format_wrk:parse("unable to connect to 127.0.0.1:1\n")),
    ?assertEqual({error, no_result}, beamscale_format_wrk:parse("")).
