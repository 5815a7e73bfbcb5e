%% Commands run with a time limit: one that ends before its port is asked for its pid, or before
%% it reads its input.
-module(beamscale_os_tests).

-include_lib("eunit/include/eunit.hrl").
-include_lib("kernel/include/file.hrl").

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

%% A private directory is new, 0700, named by prefix and pid; two differ.
private_dir_test() ->
    Tmp = filename:join("/tmp", "beamscale_os_tests." ++ os:getpid()),
    ok = filelib:ensure_path(Tmp),
    Old = os:getenv("TMPDIR"),
    true = os:putenv("TMPDIR", Tmp),
    try
        A = beamscale_os:private_dir("bs-x-"),
        B = beamscale_os:private_dir("bs-x-"),
        ?assertNotEqual(A, B),
        ?assertMatch("bs-x-" ++ _, filename:basename(A)),
        ?assertEqual(Tmp, filename:dirname(A)),
        {ok, #file_info{type = directory, mode = Mode}} = file:read_file_info(A),
        ?assertEqual(8#700, Mode band 8#777),
        %% Another emulator's, gone (pid 2^22 + 1 is above Linux's pid_max), is removed; ours
        %% and one whose name is not prefix-pid-... stay.
        Gone = filename:join(Tmp, "bs-x-4194305-abc"),
        Odd = filename:join(Tmp, "bs-x-abc"),
        ok = file:make_dir(Gone), ok = file:make_dir(Odd),
        ok = beamscale_os:remove_stale_dirs("bs-x-"),
        ?assertEqual([false, true, true, true],
                     [filelib:is_dir(D) || D <- [Gone, Odd, A, B]])
    after
        case Old of false -> os:unsetenv("TMPDIR"); _ -> os:putenv("TMPDIR", Old) end,
        file:del_dir_r(Tmp)
    end.
