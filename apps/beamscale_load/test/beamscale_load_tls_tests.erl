%% TLS error reasons in one line of words (issue 55, beamscale_load_reasons:ssl_text/1): a
%% real handshake against a server of this test's own that answers in plain text, its error
%% as `errors.csv' gets it.
-module(beamscale_load_tls_tests).
-include_lib("eunit/include/eunit.hrl").

plain_text_server_one_line_test_() ->
    {timeout, 30, fun() ->
        {ok, _} = application:ensure_all_started(ssl),
        {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}}, {active, false}]),
        {ok, Port} = inet:port(L),
        Server = spawn(fun() ->
                               {ok, S} = gen_tcp:accept(L),
                               ok = gen_tcp:send(S, "HTTP/1.1 400 Bad Request\r\n\r\n"),
                               timer:sleep(5000)
                       end),
        try
            {error, Why} = ssl:connect({127, 0, 0, 1}, Port, [{verify, verify_none}], 10000),
            Raw = unicode:characters_to_binary(ssl:format_error(Why)),
            Text = beamscale_load_reasons:ssl_text(Why),
            ?debugFmt("ssl says ~tp; one line: ~ts", [Raw, Text]),
            ?assertNotEqual(<<>>, Text),
            ?assertEqual(nomatch, binary:match(Text, [<<"\n">>, <<"\r">>])),
            ?assertEqual(nomatch, re:run(Text, "\\.erl:[0-9]")),
            %% The words are kept.
            ?assertEqual(re:replace(Raw, "\\s+at\\s+[A-Za-z0-9_]+\\.erl:[0-9]+|\\s+", "",
                                    [global, {return, binary}]),
                         binary:replace(Text, <<" ">>, <<>>, [global]))
        after
            exit(Server, kill),
            gen_tcp:close(L)
        end
    end}.
