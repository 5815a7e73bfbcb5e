%% The wait for epmd: a listener that comes late is waited for, none is given up on in time,
%% and a real `epmd -daemon' on a port of its own answers when `ensure/1' returns.
-module(beamscale_epmd_tests).

-include_lib("eunit/include/eunit.hrl").

%% A daemon listening 300 ms after it was started (as `epmd -daemon' on a busy host).
late_listener_test() ->
    Port = beamscale_load_servers:free_port(),
    Pid = beamscale_load_servers:late_listener(Port, 300),
    T0 = erlang:monotonic_time(millisecond),
    ?assert(beamscale_epmd:answers({127, 0, 0, 1}, Port, {in, 5000})),
    ?assert(erlang:monotonic_time(millisecond) - T0 >= 250),
    receive {listening, Pid} -> Pid ! stop end.

nobody_listens_test() ->
    Port = beamscale_load_servers:free_port(),
    T0 = erlang:monotonic_time(millisecond),
    ?assertNot(beamscale_epmd:answers({127, 0, 0, 1}, Port, {in, 300})),
    ?assert(erlang:monotonic_time(millisecond) - T0 < 2000).

%% ERL_EPMD_PORT as the emulator's own epmd client reads it; the daemon inherits it.
real_epmd_test() ->
    Port = beamscale_load_servers:free_port(),
    Old = os:getenv("ERL_EPMD_PORT"),
    true = os:putenv("ERL_EPMD_PORT", integer_to_list(Port)),
    try
        ?assertEqual(Port, beamscale_epmd:port()),
        ?assertEqual(ok, beamscale_epmd:ensure("127.0.0.1")),
        ?assertMatch({ok, _}, erl_epmd:names({127, 0, 0, 1})),
        ?assertMatch([_], epmd_pids(Port))
    after
        [os:cmd("kill " ++ P) || P <- epmd_pids(Port)],
        case Old of
            false -> os:unsetenv("ERL_EPMD_PORT");
            _ -> os:putenv("ERL_EPMD_PORT", Old)
        end
    end.

format_error_test() ->
    ?assertMatch("epmd does not answer on 127.0.0.1:4369 within 5 s" ++ _,
                 lists:flatten(beamscale_epmd:format_error({no_answer, 4369}))).

%% The epmd processes of this port, by their environment.
epmd_pids(Port) ->
    Var = list_to_binary("ERL_EPMD_PORT=" ++ integer_to_list(Port)),
    [filename:basename(D) || D <- filelib:wildcard("/proc/[0-9]*"),
                             file:read_file(filename:join(D, "comm")) =:= {ok, <<"epmd\n">>},
                             has_var(filename:join(D, "environ"), Var)].

has_var(File, Var) ->
    case file:read_file(File) of
        {ok, Env} -> lists:member(Var, binary:split(Env, <<0>>, [global]));
        {error, _} -> false
    end.
