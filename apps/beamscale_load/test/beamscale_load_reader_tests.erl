%% The bounded reader: a target's `max_reply_bytes' checked and applied, against a real socket
%% on 127.0.0.1 (a server in this process's node answering one fixed reply per request).
-module(beamscale_load_reader_tests).

-include_lib("eunit/include/eunit.hrl").

-include("beamscale_load_code_first.hrl").

-define(SCENARIO(Target), "{targets, [{t, #{address => \"127.0.0.1:80\"" ++ Target ++ "}}]}.\n"
                          "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
                          "{sessions, [{s, #{steps => [{http, #{}}]}}]}.\n").

check(Text) ->
    {ok, Entries} = beamscale_format_terms:parse(Text),
    beamscale_load_scenario:check("s.scenario", Entries).

option_test() ->
    {ok, #{targets := #{t := T}}} = check(?SCENARIO(", max_reply_bytes => 1000")),
    ?assertEqual(1000, maps:get(max_reply_bytes, T)),
    {ok, #{targets := #{t := Default}}} = check(?SCENARIO("")),
    ?assertNot(maps:is_key(max_reply_bytes, Default)),
    [?assertMatch({error, {beamscale_load_scenario, {"s.scenario", 1, [targets, t,
                                                                       max_reply_bytes], _}}},
                  check(?SCENARIO(", max_reply_bytes => " ++ Bad)))
     || Bad <- ["0", "-1", "x", "1.5", "99999999999"]].

%% A reply of 5000 bytes: read under the default bound, refused (connection dropped) under
%% 1000, and the request after it reconnects.
bound_test() ->
    Reply = ["HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n", binary:copy(<<"x">>, 5000)],
    {Port, Stop} = server(Reply),
    try
        Target = #{host => "127.0.0.1", port => Port},
        {ok, Spec} = beamscale_load_http:check(#{}, Target),
        {ok, C1} = beamscale_load_http:connect(Target),
        ?assertMatch({ok, {_, <<>>}}, beamscale_load_http:request(Spec, C1, 5000)),
        {ok, C2} = beamscale_load_http:connect(Target#{max_reply_bytes => 1000}),
        ?assertEqual({error, {beamscale_load_reader, {too_big, 1000}}, closed},
                     beamscale_load_http:request(Spec, C2, 5000)),
        ?assertEqual(<<"reply above max_reply_bytes (1000): connection closed">>,
                     beamscale_load_reasons:text({beamscale_load_reader, {too_big, 1000}}))
    after
        Stop()
    end.

%% Bytes that come between requests are not taken for the next reply.
unsolicited_test() ->
    {Port, Stop} = server(["HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "extra"]),
    try
        Target = #{host => "127.0.0.1", port => Port},
        {ok, Spec} = beamscale_load_http:check(#{}, Target),
        {ok, C} = beamscale_load_http:connect(Target),
        {ok, Kept} = beamscale_load_http:request(Spec, C, 5000),
        ?assertEqual({error, {beamscale_load_reader, unsolicited}, closed},
                     beamscale_load_http:request(Spec, Kept, 5000))
    after
        Stop()
    end.

server(Reply) ->
    Parent = self(),
    Pid = spawn(fun() ->
                        {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}},
                                                     {active, false}]),
                        {ok, P} = inet:port(L),
                        Parent ! {port, self(), P},
                        accept(L, Reply)
                end),
    receive {port, Pid, Port} -> {Port, fun() -> exit(Pid, kill) end} end.

accept(L, Reply) ->
    {ok, S} = gen_tcp:accept(L),
    Pid = spawn_link(fun() -> receive go -> answer(S, Reply) end end),
    ok = gen_tcp:controlling_process(S, Pid),
    Pid ! go,
    accept(L, Reply).

answer(S, Reply) ->
    case gen_tcp:recv(S, 0, 5000) of
        {ok, _} -> ok = gen_tcp:send(S, Reply), answer(S, Reply);
        {error, _} -> ok
    end.
