%% The transport of a stream kind's socket on real loopback echoes, TCP and TLS: the module a
%% connection records, a send and its echo through it, the nudge's message tag, and the record
%% dropped when the socket closes.
-module(beamscale_load_transport_tests).

-include_lib("eunit/include/eunit.hrl").

tcp_and_tls_test_() ->
    {timeout, 120, fun() ->
        {TcpPort, StopTcp} = beamscale_load_servers:tcp_echo(),
        Dir = filename:join(os:getenv("TMPDIR", "/tmp"),
                            "transport_" ++ integer_to_list(erlang:unique_integer([positive]))),
        ok = filelib:ensure_path(Dir),
        beamscale_load_servers:certificate(Dir),
        {TlsPort, StopTls} = beamscale_load_servers:tls_echo(filename:join(Dir, "cert.pem"),
                                                             filename:join(Dir, "key.pem")),
        try
            echo(#{host => "127.0.0.1", port => TcpPort}, beamscale_load_transport_tcp, tcp),
            echo(#{host => "127.0.0.1", port => TlsPort, tls => [{verify, verify_none}]},
                 beamscale_load_transport_tls, ssl)
        after
            StopTcp(),
            StopTls(),
            file:del_dir_r(Dir)
        end
    end}.

echo(Target, Module, Tag) ->
    {ok, {S, <<>>}} = beamscale_load_tcp:connect(Target),
    ?assertEqual(Module, beamscale_load_transport:which(S)),
    ok = beamscale_load_tcp:send(S, <<"ping">>),
    Deadline = beamscale_load_tcp:deadline(5000),
    ?assertEqual({ok, <<"ping">>}, beamscale_load_reader:recv_at_least(S, <<>>, 4, Deadline)),
    ?assertMatch({ok, {_, _}}, Module:peername(S)),
    ok = beamscale_load_transport:nudge(S),
    receive {Got, S, <<>>} -> ?assertEqual(Tag, Got)
    after 1000 -> error(no_nudge)
    end,
    ok = beamscale_load_tcp:drop(S),
    ?assertEqual(undefined, get({beamscale_load_transport, S})).
