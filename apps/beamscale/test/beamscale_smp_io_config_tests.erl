%% examples/smp_io.config is a valid configuration, and this erl accepts each of its flag sets.
-module(beamscale_smp_io_config_tests).
-include_lib("eunit/include/eunit.hrl").

root() -> filename:dirname(filename:dirname(filename:dirname(filename:dirname(?FILE)))).

accepted_test_() ->
    {timeout, 60,
     fun() ->
             {ok, Cwd} = file:get_cwd(),
             ok = file:set_cwd(root()),
             try
                 {ok, #{erl_args := Sets, erls := Erls}} =
                     beamscale_config:load("examples/smp_io.config", []),
                 ?assertEqual([otp, one_core], [A || {A, _} <- Erls]),
                 ?assert(length(Sets) >= 9),
                 [?assertEqual({Alias, 0}, {Alias, exit_status(Erl, Flags)})
                  || {_, Erl} <- Erls, {Alias, Flags} <- Sets]
             after
                 file:set_cwd(Cwd)
             end
     end}.

%% A flag this OTP does not know makes erl exit non-zero.
refused_test() ->
    ?assertNotEqual(0, exit_status(os:find_executable("erl"), "+IOp 2")).

exit_status(Erl, Flags) ->
    Port = open_port({spawn_executable, Erl},
                     [{args, string:lexemes(Flags, " ") ++ ["-noshell", "-eval", "halt()."]},
                      exit_status, stderr_to_stdout]),
    wait(Port).

wait(Port) ->
    receive
        {Port, {data, _}} -> wait(Port);
        {Port, {exit_status, S}} -> S
    after 20000 -> timeout
    end.
