-module(beamscale_load_reasons_tests).
-include_lib("eunit/include/eunit.hrl").

text_test() ->
    ?assertEqual(<<"the server refused TLS (its SSLRequest answer was N: ssl is off)">>,
                 beamscale_load_reasons:text({beamscale_load_pgsql, ssl_refused})),
    ?assertEqual(<<"a fragment out of order">>,
                 beamscale_load_reasons:text({beamscale_load_websocket, bad_fragment})),
    ?assertEqual(<<"http status 503">>, beamscale_load_reasons:text({status, 503})),
    ?assertEqual(<<"connection refused">>, beamscale_load_reasons:text({connect, econnrefused})),
    ?assertEqual(<<"node down (noconnection)">>,
                 beamscale_load_reasons:text({error, {erpc, noconnection}})),
    %% The stack of a remote exception is dropped: one reason, not one per call.
    ?assertEqual(<<"exception error: badarg">>,
                 beamscale_load_reasons:text({error, {exception, badarg, [{m, f, 1, []}]}})),
    ?assertEqual(<<"rpc returned {error, enoent}">>,
                 beamscale_load_reasons:text({rpc_error, enoent})).

%% An alert as ssl delivers it (its text names an OTP source line and holds a newline).
tls_alert_one_line_test() ->
    Alert = {tls_alert, {unexpected_message, "TLS client: In state hello at tls_record.erl:564 "
                                             "generated CLIENT ALERT: Fatal - Unexpected "
                                             "Message\n {unsupported_record_type,72}"}},
    ?assertEqual(<<"TLS client: In state hello generated CLIENT ALERT: Fatal - Unexpected Message "
                   "{unsupported_record_type,72}">>, beamscale_load_reasons:text(Alert)).

%% A server's message with line breaks (MySQL's ERR text here) is one line of words.
server_text_one_line_test() ->
    Text = beamscale_load_reasons:text({mysql_error, 1064, <<"42000">>,
                                        <<"You have an error\r\nnear 'x'\n\tat line 1">>}),
    ?assertEqual(<<"mysql error 1064 (42000): You have an error near 'x' at line 1">>, Text).

bounded_text_test() ->
    Long = beamscale_load_reasons:text({rpc_error, lists:duplicate(10000, $x)}),
    ?assert(byte_size(Long) < 200).

bounded_count_test() ->
    Max = beamscale_load_reasons:max_reasons(),
    C = lists:foldl(fun(I, Acc) -> beamscale_load_reasons:add(integer_to_binary(I), 1, Acc) end,
                    #{}, lists:seq(1, Max + 50)),
    ?assertEqual(Max + 1, map_size(C)),
    ?assertEqual(50, maps:get(beamscale_load_reasons:other(), C)),
    ?assertEqual(Max + 50, lists:sum(maps:values(C))),
    M = beamscale_load_reasons:merge(C, #{<<"new">> => 7, <<"1">> => 2}),
    ?assertEqual(3, maps:get(<<"1">>, M)),
    ?assertEqual(57, maps:get(beamscale_load_reasons:other(), M)).

metrics_test() ->
    M = beamscale_load_metrics:new([]),
    [beamscale_load_metrics:error(M, R) || R <- [timeout, timeout, {status, 500}]],
    #{errors := 3, timeouts := 2, reasons := R1} = beamscale_load_metrics:take(M),
    ?assertEqual(#{<<"timeout">> => 2, <<"http status 500">> => 1}, R1),
    #{errors := 0, reasons := R2} = beamscale_load_metrics:take(M),
    ?assertEqual(#{}, R2).
