%% Tsung's socket options on real sockets over 127.0.0.1 (issue #38): connect_timeout,
%% tcp_rcv_buffer and tcp_snd_buffer, as a target's connect_timeout_ms, recbuf and sndbuf, and
%% read from a Tsung file's <option>s.
-module(beamscale_load_socket_opts_tests).

-include_lib("eunit/include/eunit.hrl").

buffers_test() ->
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, P} = inet:port(L),
    T = #{host => "127.0.0.1", port => P},
    {ok, {Plain, _}} = beamscale_load_tcp:connect(T),
    {ok, {Small, _}} = beamscale_load_tcp:connect(T#{recbuf => 4096, sndbuf => 8192}),
    {ok, [{recbuf, R0}, {sndbuf, S0}]} = inet:getopts(Plain, [recbuf, sndbuf]),
    {ok, [{recbuf, R}, {sndbuf, S}]} = inet:getopts(Small, [recbuf, sndbuf]),
    %% Linux doubles what is asked (its bookkeeping share).
    ?assert(R =:= 4096 orelse R =:= 8192, R),
    ?assert(S =:= 8192 orelse S =:= 16384, S),
    ?assert(R < R0 andalso S < S0),
    [gen_tcp:close(X) || X <- [Plain, Small, L]].

%% A listener whose accept queue is full drops the next SYNs: the connect waits until its
%% timeout, the target's, not the default 5 s.
connect_timeout_test() ->
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}, {backlog, 1}]),
    {ok, P} = inet:port(L),
    Held = [gen_tcp:connect({127, 0, 0, 1}, P, [], 1000) || _ <- [1, 2]],
    T0 = erlang:monotonic_time(millisecond),
    R = beamscale_load_tcp:connect(#{host => "127.0.0.1", port => P, connect_timeout_ms => 300}),
    Ms = erlang:monotonic_time(millisecond) - T0,
    ?assertEqual({error, {connect, timeout}}, R),
    ?assert(Ms >= 250 andalso Ms < 3000, Ms),
    [gen_tcp:close(S) || {ok, S} <- Held],
    gen_tcp:close(L).

tsung_options_test() ->
    Xml = "<?xml version=\"1.0\"?>\n<tsung>\n"
          "<clients><client host=\"localhost\"/></clients>\n"
          "<servers><server host=\"127.0.0.1\" port=\"8080\" type=\"tcp\"/></servers>\n"
          "<load><arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">"
          "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>\n"
          "<options><option name=\"connect_timeout\" value=\"700\"/>"
          "<option name=\"tcp_rcv_buffer\" value=\"4096\"/>"
          "<option name=\"tcp_snd_buffer\" value=\"8192\"/></options>\n"
          "<sessions><session name=\"s\" probability=\"100\" type=\"ts_http\">"
          "<request><http url=\"/\" method=\"GET\"/></request></session></sessions>\n</tsung>\n",
    {ok, #{targets := #{server := T}}, Warnings} = beamscale_load_tsung:from_text("t.xml", Xml),
    ?assertMatch(#{connect_timeout_ms := 700, recbuf := 4096, sndbuf := 8192}, T),
    ?assertEqual([], [W || W <- Warnings, string:find(W, "option") =/= nomatch]).

terms_test() ->
    Check = fun(Extra) ->
                    {ok, E} = beamscale_format_terms:parse(
                                "{targets, [{w, #{address => \"127.0.0.1:80\"" ++ Extra ++ "}}]}.\n"
                                "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
                                "{sessions, [{s, #{steps => [{http, #{target => w}}]}}]}.\n"),
                    beamscale_load_scenario:check("s", E)
            end,
    {ok, #{targets := #{w := #{connect_timeout_ms := 100, recbuf := 1000}}}} =
        Check(", connect_timeout_ms => 100, recbuf => 1000"),
    ?assertMatch({error, _}, Check(", connect_timeout_ms => 0")),
    ?assertMatch({error, _}, Check(", sndbuf => big")).
