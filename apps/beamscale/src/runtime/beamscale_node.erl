%% @doc Nodes under test: started with `peer' from a given `erl', on loopback (or on a host
%% reached by `ssh'), with the run's cookie, and stopped for sure: when `peer' cannot stop a node
%% (it hangs), its OS process is killed (on its host, through `ssh', for a node started so).
-module(beamscale_node).

-export([distribute/0, start/2, stop/1, os_pid/1, alive/1, format_error/1]).
-export_type([handle/0, spec/0, ssh/0]).

-type handle() :: #{peer := pid(), node := node(), os_pid := string(), ssh => ssh()}.
%% What to start: the erl, its flags, schedulers (default: the host's cores), the code paths to
%% add, the host to start it on through `ssh' (default: here, on 127.0.0.1), and the I/O device
%% its standard output and error reports go to (default: the caller's group leader, as `peer'
%% relays them: the terminal).
-type spec() :: #{erl := string(), flags := string(), schedulers => pos_integer(),
                  code_path => [string()], ssh => ssh(), output => pid()}.
%% `host': the node's host name or address, as this node reaches it; `args': the `ssh' options
%% before the destination (port, identity, `-o' options); `user': the login, when not ours.
-type ssh() :: #{host := string(), args := [string()], user => string()}.

-define(BOOT_TIMEOUT, 30000).
-define(STOP_TIMEOUT, 5000).
%% A plain emulator start and halt takes a fraction of a second; a loaded host may take seconds.
-define(PREFLIGHT_TIMEOUT, 15000).
-define(LOOPBACK, "127.0.0.1").
%% beamscale registers no global names: global's guard against overlapping partitions would only
%% disconnect the nodes still up when one dies (a killed load node or target), in warning reports
%% on the terminal. The command's own node has the same flag (rebar.config's escript_emu_args).
-define(NO_PARTITION_GUARD, ["-kernel", "prevent_overlapping_partitions", "false"]).

%% @doc Make this node distributed on loopback with a fresh random cookie (if it is not yet).
-spec distribute() -> {ok, node()} | {error, term()}.
distribute() ->
    case node() of
        nonode@nohost ->
            _ = os:cmd("epmd -daemon -address 127.0.0.1"),
            ok = application:set_env(kernel, inet_dist_use_interface, {127, 0, 0, 1}),
            Name = list_to_atom("beamscale_" ++ random_name() ++ "@" ++ ?LOOPBACK),
            case net_kernel:start([Name, longnames]) of
                {ok, _} ->
                    true = erlang:set_cookie(node(), list_to_atom(random_name() ++ random_name())),
                    {ok, node()};
                {error, Reason} -> {error, {distribution, Reason}}
            end;
        Node -> {ok, Node}
    end.

%% @doc Start one node under test; `Label' becomes part of its name. An error is this module's,
%% so every caller (suite, load targets, load nodes, study cells) says it in the same words.
-spec start(string(), spec()) -> {ok, handle()} | {error, {?MODULE, {node_start, term()}}}.
start(Label, #{erl := Erl, flags := Flags} = Spec) ->
    Name = "bs_" ++ Label ++ "_" ++ random_name(),
    Paths = lists:append([["-pa", P] || P <- maps:get(code_path, Spec, [])]),
    Host = case Spec of #{ssh := #{host := H}} -> H; _ -> ?LOOPBACK end,
    {Cookie, Env, Private} = cookie(Spec),
    Scheds = [A || #{schedulers := S} <- [Spec], A <- ["+S", io_lib:format("~b:~b", [S, S])]],
    Emulator = [lists:flatten(A) || A <- Scheds ++ Paths ++ string:lexemes(Flags, " ")],
    Args = Cookie
        ++ [A || Host =:= ?LOOPBACK, A <- ["-kernel", "inet_dist_use_interface", "{127,0,0,1}"]]
        ++ ?NO_PARTITION_GUARD ++ Emulator,
    try
        ok = preflight(Erl, [A || not is_map_key(ssh, Spec), A <- Emulator]),
        {Exec, Args1} = exec(Erl, [lists:flatten(A) || A <- Args], Spec),
        with_output(maps:get(output, Spec, group_leader()),
                    fun() -> peer:start(#{name => Name, host => Host, longnames => true,
                                          exec => Exec, args => Args1, env => Env,
                                          wait_boot => ?BOOT_TIMEOUT,
                                          shutdown => {halt, ?STOP_TIMEOUT}})
                    end)
    of
        {ok, Peer, Node} ->
            OsPid = erpc:call(Node, os, getpid, [], ?BOOT_TIMEOUT),
            {ok, maps:merge(#{peer => Peer, node => Node, os_pid => OsPid},
                            maps:with([ssh], Spec))};
        {error, Reason} -> {error, {?MODULE, {node_start, Reason}}}
    catch
        error:{badmatch, {error, {emulator, _, _} = Why}} -> {error, {?MODULE, {node_start, Why}}};
        Class:Reason -> {error, {?MODULE, {node_start, {Class, Reason}}}}
    after
        %% The node read its cookie at boot: the file is not needed any more.
        _ = Private =:= none orelse file:del_dir_r(Private)
    end.

%% The run's cookie must not be on the node's command line (any local user reads it with ps).
%% erl reads $HOME/.erlang.cookie when no -setcookie is given, so a node here gets a HOME of its
%% own: a fresh directory only this user can enter, holding the cookie file (mode 0400), removed
%% once the node is up. The environment is private (/proc/PID/environ is 0400); BEAMSCALE_RUN
%% names the command's node so that tests can find a run's emulators. Through ssh the remote
%% environment is not ours to set: those nodes still get -setcookie.
cookie(#{ssh := _}) -> {["-setcookie", atom_to_list(erlang:get_cookie())], [], none};
cookie(_Spec) ->
    Dir = filename:join(tmp_dir(), "beamscale-cookie-" ++ random_name()),
    ok = file:make_dir(Dir),
    ok = file:change_mode(Dir, 8#700),
    File = filename:join(Dir, ".erlang.cookie"),
    ok = file:write_file(File, <<>>),
    ok = file:change_mode(File, 8#600),
    ok = file:write_file(File, atom_to_list(erlang:get_cookie())),
    ok = file:change_mode(File, 8#400),
    {[], [{"HOME", Dir}, {"BEAMSCALE_RUN", atom_to_list(node())}], Dir}.

tmp_dir() ->
    case os:getenv("TMPDIR") of
        false -> "/tmp";
        "" -> "/tmp";
        T -> T
    end.

%% @doc One line for an error of `start/2': the emulator's own words when it refused its flags.
-spec format_error(term()) -> iodata().
format_error({node_start, {emulator, timeout, Words}}) ->
    ["the node's emulator did not start or stop within ",
     integer_to_list(?PREFLIGHT_TIMEOUT div 1000), " s: ", Words];
format_error({node_start, {emulator, Status, Words}}) ->
    io_lib:format("the node's emulator refused to start (exit status ~b): ~ts", [Status, Words]);
format_error({node_start, {exit, timeout}}) ->
    io_lib:format("the node did not boot within ~b s", [?BOOT_TIMEOUT div 1000]);
format_error({node_start, Reason}) ->
    ["the node did not start: ", beamscale_error:format(Reason)].

%% `peer' relays the node's `user' to the group leader of its controlling process, which it
%% takes from the caller of `peer:start/1'.
with_output(Device, Start) ->
    Old = group_leader(),
    true = group_leader(Device, self()),
    try Start()
    after true = group_leader(Old, self())
    end.

%% A wrong emulator flag kills a detached node unseen, and `peer' only says so after its boot
%% timeout. The same erl with the same flags run plainly says what is wrong at once, in the
%% emulator's words: run that first, once per erl and arguments (a node started through ssh,
%% with no local arguments, is not checked).
preflight(_Erl, []) -> ok;
preflight(Erl, Args) ->
    Key = {?MODULE, preflight, Erl, Args},
    case persistent_term:get(Key, unchecked) of
        ok -> ok;
        unchecked ->
            Check = Args ++ ["-noshell", "-noinput", "-eval", "erlang:halt(0)"],
            case beamscale_os:cmd(Erl, Check, ?PREFLIGHT_TIMEOUT) of
                {0, _} -> persistent_term:put(Key, ok);
                {Status, Out} -> {error, {emulator, Status, emulator_words(Out)}}
            end
    end.

%% What the emulator said before its usage text.
emulator_words(Out) ->
    [Said | _] = string:split(Out, <<"Usage:">>),
    Lines = [T || L <- string:lexemes(Said, "\n"), (T = string:trim(L)) =/= <<>>],
    iolist_to_binary(lists:join(<<"; ">>, lists:sublist(Lines, 3))).

%% @doc Stop a node; if it does not go within the stop timeout, kill its OS process.
-spec stop(handle()) -> ok.
stop(#{peer := Peer, os_pid := OsPid} = Handle) ->
    {Pid, Ref} = spawn_monitor(fun() -> catch peer:stop(Peer) end),
    receive
        {'DOWN', Ref, process, Pid, _} -> ok
    after ?STOP_TIMEOUT * 2 ->
        exit(Pid, kill)
    end,
    case Handle of
        #{ssh := Ssh, node := Node} -> ssh_kill(Ssh, OsPid, Node);
        _ -> wait_gone(OsPid)
    end.

%% @doc The OS process id of a node's emulator.
-spec os_pid(handle()) -> string().
os_pid(#{os_pid := OsPid}) -> OsPid.

%% @doc Whether the node's OS process still runs.
-spec alive(handle() | string()) -> boolean().
alive(#{os_pid := OsPid}) -> alive(OsPid);
alive(OsPid) -> beamscale_os:alive(OsPid).

%% A node that `peer' could not stop is killed by its OS pid.
wait_gone(OsPid) ->
    case beamscale_os:wait_gone(OsPid, ?STOP_TIMEOUT div 2) of
        ok -> ok;
        timeout -> beamscale_os:signal(OsPid, "KILL")
    end.

%% Through ssh, the remote shell reads the command line: every argument of ours is quoted for
%% it (peer's own are names, base64 and numbers).
exec(Erl, Args, #{ssh := Ssh}) ->
    {{ssh_exe(), ssh_args(Ssh) ++ [quote(Erl)]}, [quote(A) || A <- Args]};
exec(Erl, Args, _Spec) -> {Erl, Args}.

ssh_exe() ->
    case os:find_executable("ssh") of
        false -> error(no_ssh);
        Exe -> Exe
    end.

ssh_args(#{host := Host, args := Args} = Ssh) ->
    Dest = case Ssh of #{user := U} -> U ++ "@" ++ Host; _ -> Host end,
    ["-o", "BatchMode=yes"] ++ Args ++ [Dest].

quote(Arg) -> "'" ++ lists:flatten(string:replace(Arg, "'", "'\\''", all)) ++ "'".

%% The node's host kills it if it is still there after a grace period (the remote twin of
%% wait_gone/2). The process must still be the node (its command line names it): a pid reused
%% since is left alone. ssh runs with a time limit, so a host gone away cannot hang the run.
ssh_kill(Ssh, OsPid, Node) ->
    [Name, _] = string:split(atom_to_list(Node), "@"),
    Is = "grep -q -- '" ++ Name ++ "@' /proc/" ++ OsPid ++ "/cmdline 2>/dev/null",
    %% After the kill, wait as the local path does until the process is gone (or a zombie,
    %% whose command line is empty): `kill' returns before the process has ended.
    Wait = fun(N) -> "for i in $(seq " ++ integer_to_list(N) ++ "); do " ++ Is
                         ++ " || exit 0; sleep 0.2; done; " end,
    Script = Wait(10) ++ Is ++ " && kill -9 " ++ OsPid ++ "; " ++ Wait(25) ++ "exit 1",
    try open_port({spawn_executable, ssh_exe()},
                  [{args, ["-o", "ConnectTimeout=5" | ssh_args(Ssh)] ++ [Script]},
                   exit_status, stderr_to_stdout, hide]) of
        Port -> ssh_wait(Port)
    catch error:_ -> ok
    end.

ssh_wait(Port) ->
    receive
        {Port, {data, _}} -> ssh_wait(Port);
        {Port, {exit_status, _}} -> ok
    after ?STOP_TIMEOUT * 2 ->
        _ = case erlang:port_info(Port, os_pid) of
            {os_pid, Pid} -> beamscale_os:signal(integer_to_list(Pid), "KILL");
            undefined -> ok
        end,
        catch port_close(Port),
        ok
    end.

random_name() ->
    [C || <<C>> <= base64:encode(crypto:strong_rand_bytes(9)), C =/= $+, C =/= $/, C =/= $=].
