%% Commands run with a time limit: one that ends before its port is asked for its pid, or before
%% it reads its input.
-module(beamscale_os_tests).

-include_lib("eunit/include/eunit.hrl").

%% `true' ends at once; its port can be closed before `port_info/2' reads its pid (seen once as
%% a crash of `getconf' in a CT run on a loaded host). Callers in parallel, so that some are
%% preempted between the two. With input, a command that ended first closed its port with epipe,
%% which ended the caller through the link: now `{closed, <<>>}'.
quick_command_test_() ->
    {timeout, 120,
     fun() ->
             True = os:find_executable("true"),
             Run = fun(I) when I rem 2 =:= 0 -> beamscale_os:cmd(True, [], 5000);
                      (_) -> beamscale_os:cmd_input(True, [], "x", 5000)
                   end,
             Self = self(),
             Pids = [spawn_link(fun() -> Self ! {self(), [catch Run(I) || I <- lists:seq(1, 150)]}
                                end) || _ <- lists:seq(1, 20)],
             Got = lists:usort(lists:append([receive {P, R} -> R end || P <- Pids])),
             ?assertEqual([], Got -- [{0, <<>>}, {closed, <<>>}]),
             ?assert(lists:member({0, <<>>}, Got))
     end}.

timeout_kills_test() ->
    ?assertEqual({timeout, <<>>}, beamscale_os:cmd(os:find_executable("sleep"), ["10"], 200)).

%% Secrets of the length asked; two draws differ.
random_bytes_test() ->
    A = beamscale_os:random_bytes(16),
    ?assertEqual(16, byte_size(A)),
    ?assertNotEqual(A, beamscale_os:random_bytes(16)),
    ?assertEqual(1, byte_size(beamscale_os:random_bytes(1))).
