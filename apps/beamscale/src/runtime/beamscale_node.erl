%% @doc Nodes under test: started with `peer' from a given `erl', on loopback (or on a host
%% reached by `ssh'), with the run's cookie, and stopped for sure: when `peer' cannot stop a node
%% (it hangs), its OS process is killed (on its host, through `ssh', for a node started so).
-module(beamscale_node).

-export([distribute/0, loopback/0, listen/1, start/2, stop/1, os_pid/1, alive/1, format_error/1]).
-export_type([handle/0, spec/0, ssh/0]).

-type handle() :: #{peer := pid(), node := node(), os_pid := string(), ssh => ssh()}.
%% What to start: the erl, its flags, schedulers (default: the host's cores), the code paths to
%% add, the host to start it on through `ssh' (default: here, on 127.0.0.1), and the I/O device
%% its standard output and error reports go to (default: the caller's group leader, as `peer'
%% relays them: the terminal); `wrap': a command the erl runs under here (Valgrind, for the
%% instruction clock), with its own boot timeout (ms).
-type spec() :: #{erl := string(), flags := string(), schedulers => pos_integer(),
                  code_path => [string()], ssh => ssh(), output => pid(),
                  name_prefix => string(), wrap => [string(), ...],
                  boot_timeout => pos_integer()}.
%% `host': the node's host name or address, as this node reaches it; `args': the `ssh' options
%% before the destination (port, identity, `-o' options); `user': the login, when not ours.
-type ssh() :: #{host := string(), args := [string()], user => string()}.

-define(BOOT_TIMEOUT, 30000).
-define(STOP_TIMEOUT, 5000).
%% This node's distribution set-up time (s), read once when it starts: the handshake with a node
%% under Valgrind on a loaded host is slow (net_kernel's 7 s: noconnection at a load of 27).
-define(SETUP_S, 120).
%% A plain emulator start and halt takes a fraction of a second; a loaded host may take seconds.
-define(PREFLIGHT_TIMEOUT, 15000).
-define(LOOPBACK, "127.0.0.1").
%% A node's private HOME holding the run's cookie while it boots: this prefix, then the OS pid of
%% the command that made it.
-define(COOKIE_PREFIX, "beamscale-cookie-").
%% beamscale registers no global names: global's guard against overlapping partitions would only
%% disconnect the nodes still up when one dies (a killed load node or target), in warning reports
%% on the terminal. The command's own node has the same flag (rebar.config's escript_emu_args).
-define(NO_PARTITION_GUARD, ["-kernel", "prevent_overlapping_partitions", "false"]).

%% @doc Make this node distributed (if it is not yet) with a fresh random cookie, on the address
%% `beamscale_node:listen/1' set (default 127.0.0.1, loopback alone).
-spec distribute() -> {ok, node()} | {error, {distribution, term()}}.
distribute() -> distribute(persistent_term:get({?MODULE, address}, ?LOOPBACK)).

%% @doc The address distribution is on unless `listen/1' was given another.
-spec loopback() -> string().
loopback() -> ?LOOPBACK.

%% @doc The address this node's distribution is to listen on: one that the hosts of its load or
%% benchmark nodes reach (`--dist-address'). Only before `distribute/0'.
-spec listen(string()) -> ok | {error, {?MODULE, term()}}.
listen(Address) ->
    case inet:parse_ipv4strict_address(Address) of
        {ok, _} -> persistent_term:put({?MODULE, address}, Address);
        {error, _} -> {error, {?MODULE, {dist_address, Address}}}
    end.

distribute(Address) ->
    case node() of
        nonode@nohost ->
            {ok, Ip} = inet:parse_ipv4strict_address(Address),
            case beamscale_epmd:ensure(Ip) of
                ok ->
                    ok = application:set_env(kernel, inet_dist_use_interface, Ip),
                    start_distribution("beamscale_" ++ random_name() ++ "@" ++ Address);
                {error, Reason} -> {error, {distribution, Reason}}
            end;
        Node -> {ok, Node}
    end.

start_distribution(Name) ->
    case application:get_env(kernel, net_setuptime) of
        undefined -> ok = application:set_env(kernel, net_setuptime, ?SETUP_S);
        {ok, _} -> ok
    end,
    case net_kernel:start([list_to_atom(Name), longnames]) of
        {ok, _} ->
            true = erlang:set_cookie(node(), list_to_atom(random_name() ++ random_name())),
            {ok, node()};
        {error, Reason} -> {error, {distribution, Reason}}
    end.

%% The host part of this node's name when it is an address (distribute/0 names it so): where
%% the nodes it starts here listen too; else loopback.
here() ->
    Host = lists:last(string:split(atom_to_list(node()), "@")),
    case inet:parse_ipv4strict_address(Host) of
        {ok, Ip} -> {Host, Ip};
        {error, _} -> {?LOOPBACK, {127, 0, 0, 1}}
    end.

%% The distribution's carrier, for every node started (TLS: `-proto_dist inet_tls' with its
%% options file, as this emulator was started with, often through ERL_FLAGS).
dist_args() ->
    [A || K <- [proto_dist, ssl_dist_optfile], {ok, [V | _]} <- [init:get_argument(K)],
          A <- ["-" ++ atom_to_list(K) | V]].

%% @doc Start one node under test; `Label' becomes part of its name. An error is this module's,
%% so every caller (suite, load targets, load nodes, study cells) says it in the same words.
-spec start(string(), spec()) -> {ok, handle()} | {error, {?MODULE, {node_start, term()}}}.
start(Label, #{erl := Erl, flags := Flags} = Spec) ->
    %% A handler may find its peers by the start of their names (bencherl's im_bench).
    Name = case Spec of
               #{name_prefix := Prefix} -> Prefix ++ "_" ++ random_name();
               _ -> "bs_" ++ Label ++ "_" ++ random_name()
           end,
    Paths = lists:append([["-pa", P] || P <- maps:get(code_path, Spec, [])]),
    Scheds = [A || #{schedulers := S} <- [Spec], A <- ["+S", io_lib:format("~b:~b", [S, S])]],
    Emulator = [lists:flatten(A) || A <- ?NO_PARTITION_GUARD ++ Scheds ++ Paths
                                          ++ string:lexemes(Flags, " ")],
    try
        {ok, Release} = preflight(Erl, [A || not is_map_key(ssh, Spec),
                                             A <- dist_args() ++ Emulator]),
        ok = reachable(Spec),
        boot(Name, Erl, Emulator, Spec, Release)
    catch
        error:{badmatch, {error, {emulator, _, _} = Why}} -> {error, {?MODULE, {node_start, Why}}};
        error:{badmatch, {error, {cookie, _} = Why}} -> {error, {?MODULE, {node_start, Why}}};
        error:{badmatch, {error, {loopback, _} = Why}} -> {error, {?MODULE, {node_start, Why}}};
        Class:Reason -> {error, {?MODULE, {node_start, {Class, Reason}}}}
    end.

%% A node on another host connects back to this one: not to a loopback address.
reachable(#{ssh := #{host := Host}}) ->
    case {loopback(Host), loopback(element(1, here()))} of
        {false, true} -> {error, {loopback, Host}};
        _ -> ok
    end;
reachable(_Spec) -> ok.

loopback("127." ++ _) -> true;
loopback("localhost") -> true;
loopback(_) -> false.

%% Here: a private HOME holding the cookie, on this node's address. There: the same made on the
%% host through ssh, the node listening on the host's addresses.
boot(Name, Erl, Emulator, #{ssh := #{host := Host} = Ssh} = Spec, _Release) ->
    {ok, Home} = beamscale_node_ssh:home(Ssh),
    %% Hosts of nodes need not reach each other (only this one): no full mesh by `global'.
    {Exec, Args} = beamscale_node_ssh:exec(Erl, ["-connect_all", "false"] ++ dist_args()
                                                ++ Emulator, Ssh, Home),
    Result = peer_start(Name, Host, Exec, Args, [], Spec, #{}),
    ok = beamscale_node_ssh:forget(Ssh, Home, case Result of {ok, _, N} -> N; _ -> none end),
    started(Result, Spec);
boot(Name, Erl, Emulator, Spec, Release) ->
    {Cookie, Private} = cookie(),
    Env = Cookie ++ no_env_flags(),
    {Here, Ip} = here(),
    Interface = ["-kernel", "inet_dist_use_interface", lists:flatten(io_lib:format("~p", [Ip]))],
    try started(peer_start(Name, Here, exec(Erl, Spec), Interface ++ dist_args() ++ Emulator,
                           Env, Spec, control(Release, Ip, Spec)), Spec)
    after
        %% The node read its cookie at boot: the file is not needed any more.
        file:del_dir_r(Private)
    end.

%% A node here would also read this emulator's flags from ERL_FLAGS, ERL_AFLAGS and ERL_ZFLAGS:
%% with the carrier given twice, net_kernel ignores both and speaks plain TCP, which a TLS
%% origin refuses, and `peer' only says "did not boot". A node's flags are the run's (as
%% through ssh, where this environment does not go): the variables are emptied.
no_env_flags() -> [{V, ""} || V <- ["ERL_FLAGS", "ERL_AFLAGS", "ERL_ZFLAGS"]].

peer_start(Name, Host, Exec, Args, Env, Spec, Control) ->
    with_output(maps:get(output, Spec, group_leader()),
                fun() -> peer:start(Control#{name => Name, host => Host, longnames => true,
                                             exec => Exec, args => Args, env => Env,
                                             wait_boot => boot_timeout(Spec),
                                             shutdown => {halt, ?STOP_TIMEOUT}})
                end).

%% `peer''s control connection to a node of another release is TCP (on this node's address):
%% over the distribution, OTP 27's peer asks its origin `{starting, Node}' at boot, which OTP
%% 25's does not answer (function_clause), while both speak the same messages over TCP. A wrapped
%% node's (Valgrind's) is its standard I/O: over the distribution its boot asks the origin for a
%% group leader within gen_server's 5 s, connection set-up included, and over TCP it must connect
%% within `peer''s 60 s; at a load of 15-18 every Valgrind boot missed one or the other and halted
%% unseen. Standard I/O waits for no one, and its end is the emulator's exit, seen at once. The
%% distribution is then set up from here (`?SETUP_S').
control(_Release, _Ip, #{wrap := _}) -> #{connection => standard_io};
control(Release, Ip, _Spec) ->
    case Release =:= erlang:system_info(otp_release) orelse Release =:= unknown of
        true -> #{};
        false -> #{connection => {Ip, 0}}
    end.

exec(Erl, #{wrap := [Wrapper | Args]}) -> {Wrapper, Args ++ [Erl]};
exec(Erl, _Spec) -> Erl.

boot_timeout(Spec) -> maps:get(boot_timeout, Spec, ?BOOT_TIMEOUT).

started({ok, Peer, Node}, Spec) ->
    OsPid = erpc:call(Node, os, getpid, [], boot_timeout(Spec)),
    {ok, maps:merge(#{peer => Peer, node => Node, os_pid => OsPid}, maps:with([ssh], Spec))};
started({error, Reason}, _Spec) -> {error, {?MODULE, {node_start, Reason}}}.

%% The run's cookie must not be on the node's command line (any local user reads it with ps).
%% erl reads $HOME/.erlang.cookie when no -setcookie is given, so a node here gets a HOME of its
%% own: a fresh directory only this user can enter, holding the cookie file (mode 0400), removed
%% once the node is up. The environment is private (/proc/PID/environ is 0400); BEAMSCALE_RUN
%% names the command's node so that tests can find a run's emulators. Through ssh the same is
%% made on the node's host (beamscale_node_ssh:home/1).
%% The directory's name holds this emulator's OS pid: one left by a command killed while a node
%% booted (the only moment it exists) is removed by the next command, once its owner is gone.
cookie() ->
    ok = beamscale_os:remove_stale_dirs(?COOKIE_PREFIX),
    Dir = beamscale_os:private_dir(?COOKIE_PREFIX),
    File = filename:join(Dir, ".erlang.cookie"),
    ok = file:write_file(File, <<>>),
    ok = file:change_mode(File, 8#600),
    ok = file:write_file(File, atom_to_list(erlang:get_cookie())),
    ok = file:change_mode(File, 8#400),
    {[{"HOME", Dir}, {"BEAMSCALE_RUN", atom_to_list(node())}], Dir}.

%% @doc One line for an error of `start/2': the emulator's own words when it refused its flags.
-spec format_error(term()) -> iodata().
format_error({dist_address, A}) ->
    ["--dist-address ", A, ": expected an IPv4 address of this host"];
format_error({node_start, {loopback, Host}}) ->
    ["a node on ", Host, " could not reach beamscale's node, which listens on loopback: give "
     "--dist-address with an address of this host that ", Host, " reaches"];
format_error({node_start, {cookie, Why}}) ->
    io_lib:format("cannot put the run's cookie on the node's host through ssh: ~0tp", [Why]);
format_error({node_start, {emulator, timeout, Words}}) ->
    ["the node's emulator did not start or stop within ",
     integer_to_list(?PREFLIGHT_TIMEOUT div 1000), " s: ", Words];
format_error({node_start, {emulator, Status, Words}}) ->
    io_lib:format("the node's emulator refused to start (exit status ~b): ~ts", [Status, Words]);
format_error({node_start, {exit, timeout}}) ->
    io_lib:format("the node did not boot within its boot timeout (~b s; under Valgrind, for the "
                  "instruction clock, 600 s)", [?BOOT_TIMEOUT div 1000]);
format_error({node_start, {exit, {boot_failed, {exit_status, Status}}}}) ->
    io_lib:format("the node's emulator ended while it booted (exit status ~b)", [Status]);
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
%% with no local arguments, is not checked). It says the erl's OTP release too.
preflight(_Erl, []) -> {ok, unknown};
preflight(Erl, Args) ->
    Key = {?MODULE, preflight, Erl, Args},
    case persistent_term:get(Key, unchecked) of
        unchecked ->
            %% With `+JPperf true' the check would leave its perf map in /tmp: a later flag
            %% turns it off (the first is still checked).
            NoMap = [F || lists:member("+JPperf", Args), F <- ["+JPperf", "false"]],
            Check = Args ++ NoMap ++ ["-noshell", "-noinput", "-eval",
                                      "io:format(\"~nbeamscale_otp_release=~s~n\", "
                                      "[erlang:system_info(otp_release)]), erlang:halt(0)"],
            case beamscale_os:cmd(Erl, Check, no_env_flags(), ?PREFLIGHT_TIMEOUT) of
                {0, Out} ->
                    persistent_term:put(Key, {ok, release(Out)}),
                    persistent_term:get(Key);
                {Status, Out} -> {error, {emulator, Status, emulator_words(Out)}}
            end;
        Checked -> Checked
    end.

release(Out) ->
    case re:run(Out, "beamscale_otp_release=([0-9]+)", [{capture, all_but_first, list}]) of
        {match, [Release]} -> Release;
        nomatch -> unknown
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
        #{ssh := Ssh, node := Node} -> beamscale_node_ssh:kill(Ssh, OsPid, Node);
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

random_name() -> beamscale_os:random_name().
