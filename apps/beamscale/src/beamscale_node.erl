%% @doc Nodes under test: started with `peer' from a given `erl', on loopback, with the run's
%% cookie, and stopped for sure: when `peer' cannot stop a node (it hangs), its OS process is
%% killed.
-module(beamscale_node).

-export([distribute/0, start/2, stop/1, os_pid/1, alive/1]).
-export_type([handle/0, spec/0]).

-type handle() :: #{peer := pid(), node := node(), os_pid := string()}.
%% What to start: the erl, its flags, schedulers and the code paths to add.
-type spec() :: #{erl := string(), flags := string(), schedulers := pos_integer(),
                  code_path => [string()]}.

-define(BOOT_TIMEOUT, 30000).
-define(STOP_TIMEOUT, 5000).
-define(LOOPBACK, "127.0.0.1").

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

%% @doc Start one node under test; `Label' becomes part of its name.
-spec start(string(), spec()) -> {ok, handle()} | {error, term()}.
start(Label, #{erl := Erl, flags := Flags, schedulers := S} = Spec) ->
    Name = "bs_" ++ Label ++ "_" ++ random_name(),
    Paths = lists:append([["-pa", P] || P <- maps:get(code_path, Spec, [])]),
    Args = ["-setcookie", atom_to_list(erlang:get_cookie()),
            "-kernel", "inet_dist_use_interface", "{127,0,0,1}",
            "+S", io_lib:format("~b:~b", [S, S])] ++ Paths ++ string:lexemes(Flags, " "),
    Opts = #{name => Name, host => ?LOOPBACK, longnames => true, exec => Erl,
             args => [lists:flatten(A) || A <- Args], wait_boot => ?BOOT_TIMEOUT,
             shutdown => {halt, ?STOP_TIMEOUT}},
    try peer:start(Opts) of
        {ok, Peer, Node} ->
            OsPid = erpc:call(Node, os, getpid, [], ?BOOT_TIMEOUT),
            {ok, #{peer => Peer, node => Node, os_pid => OsPid}};
        {error, Reason} -> {error, {node_start, Reason}}
    catch
        Class:Reason -> {error, {node_start, {Class, Reason}}}
    end.

%% @doc Stop a node; if it does not go within the stop timeout, kill its OS process.
-spec stop(handle()) -> ok.
stop(#{peer := Peer, os_pid := OsPid}) ->
    {Pid, Ref} = spawn_monitor(fun() -> catch peer:stop(Peer) end),
    receive
        {'DOWN', Ref, process, Pid, _} -> ok
    after ?STOP_TIMEOUT * 2 ->
        exit(Pid, kill)
    end,
    wait_gone(OsPid, 20).

%% @doc The OS process id of a node's emulator.
-spec os_pid(handle()) -> string().
os_pid(#{os_pid := OsPid}) -> OsPid.

%% @doc Whether the node's OS process still runs.
-spec alive(handle() | string()) -> boolean().
alive(#{os_pid := OsPid}) -> alive(OsPid);
alive(OsPid) -> filelib:is_dir("/proc/" ++ OsPid) andalso not zombie(OsPid).

wait_gone(OsPid, 0) ->
    _ = os:cmd("kill -9 " ++ OsPid),
    ok;
wait_gone(OsPid, N) ->
    case alive(OsPid) of
        false -> ok;
        true -> timer:sleep(100), wait_gone(OsPid, N - 1)
    end.

zombie(OsPid) ->
    case file:read_file("/proc/" ++ OsPid ++ "/stat") of
        {ok, Stat} ->
            [_, AfterName] = string:split(Stat, ") ", trailing),
            binary:first(AfterName) =:= $Z;
        {error, _} -> true
    end.

random_name() ->
    [C || <<C>> <= base64:encode(crypto:strong_rand_bytes(9)), C =/= $+, C =/= $/, C =/= $=].
