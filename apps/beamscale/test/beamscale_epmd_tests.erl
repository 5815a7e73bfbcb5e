%% The wait for epmd: a listener that comes late is waited for, none is given up on in time,
%% and a real `epmd -daemon' on a port of its own answers when `ensure/1' returns.
-module(beamscale_epmd_tests).

-include_lib("eunit/include/eunit.hrl").

%% A daemon listening 300 ms after it was started (as `epmd -daemon' on a busy host).
late_listener_test() ->
    Port = beamscale_load_servers:free_port(),
    Pid = beamscale_load_servers:late_listener(Port, 300),
    T0 = erlang:monotonic_time(millisecond),
    ?assert(beamscale_epmd:answers({127, 0, 0, 1}, Port, 5000)),
    ?assert(erlang:monotonic_time(millisecond) - T0 >= 250),
    receive {listening, Pid} -> Pid ! stop end.

nobody_listens_test() ->
    Port = beamscale_load_servers:free_port(),
    T0 = erlang:monotonic_time(millisecond),
    ?assertNot(beamscale_epmd:answers({127, 0, 0, 1}, Port, 300)),
    ?assert(erlang:monotonic_time(millisecond) - T0 < 2000).

%% A daemon of its own on a free port (`-port'), asked for its names as `erl_epmd' asks.
real_epmd_test() ->
    Port = beamscale_load_servers:free_port(),
    try
        ?assertEqual(ok, beamscale_epmd:ensure({127, 0, 0, 1}, Port)),
        {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, false}]),
        ok = gen_tcp:send(S, <<1:16, $n>>),
        %% NAMES_RESP: epmd's own port first.
        ?assertEqual({ok, <<Port:32>>}, gen_tcp:recv(S, 4, 5000)),
        ok = gen_tcp:close(S),
        ?assertMatch([_ | _], epmd_pids(Port))
    after
        [os:cmd("kill " ++ P) || P <- epmd_pids(Port)]
    end.

format_error_test() ->
    ?assertMatch("epmd does not answer on 127.0.0.1:4369 within 5 s" ++ _,
                 lists:flatten(beamscale_epmd:format_error({no_answer, 4369}))).

%% The epmd processes of this port, by their command line.
epmd_pids(Port) ->
    Args = [<<"-port">>, integer_to_binary(Port)],
    [filename:basename(D) || D <- filelib:wildcard("/proc/[0-9]*"),
                             file:read_file(filename:join(D, "comm")) =:= {ok, <<"epmd\n">>},
                             has_args(filename:join(D, "cmdline"), Args)].

has_args(File, Args) ->
    case file:read_file(File) of
        {ok, Cmd} -> lists:prefix(Args, lists:dropwhile(fun(A) -> A =/= <<"-port">> end,
                                                         binary:split(Cmd, <<0>>, [global])));
        {error, _} -> false
    end.
