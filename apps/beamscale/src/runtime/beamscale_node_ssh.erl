%% @doc The `ssh' side of `beamscale_node': how a node on another host is started (the command
%% `peer' runs), how the run's cookie gets there without being on any command line, and how a
%% node that did not halt is killed on its host.
-module(beamscale_node_ssh).

-export([home/1, exec/4, forget/3, kill/3]).

%% Writing the cookie is one short ssh session (a login and a few shell built-ins).
-define(COOKIE_TIMEOUT, 20000).
%% Killing a stuck node waits up to 2 s, kills, and waits up to 5 s more on its host; the
%% ssh login before it took seconds beside a busy process per core, and a cut at 10 s left the
%% node unkilled once.
-define(KILL_TIMEOUT, 20000).

%% @doc Put the run's cookie in a fresh directory on the host that only its user may enter
%% (`mktemp -d', mode 0700; the file 0400), sent on ssh's standard input: `ps' on either host
%% never shows it. The node gets that directory as its HOME, where erl reads `.erlang.cookie'.
-spec home(beamscale_node:ssh()) -> {ok, string()} | {error, {cookie, term()}}.
home(Ssh) ->
    Script = "umask 077 && d=$(mktemp -d) && IFS= read -r c && printf '%s' \"$c\" > "
             "\"$d/.erlang.cookie\" && chmod 400 \"$d/.erlang.cookie\" && echo \"HOME=$d\"",
    case beamscale_os:cmd_input(exe(), ["-o", "ConnectTimeout=10" | args(Ssh)] ++ [Script],
                                [atom_to_list(erlang:get_cookie()), $\n], ?COOKIE_TIMEOUT) of
        {0, Out} ->
            case re:run(Out, "^HOME=(/\\S+)$", [multiline, {capture, [1], list}]) of
                {match, [Dir]} -> {ok, Dir};
                nomatch -> {error, {cookie, words(Out)}}
            end;
        {Status, Out} -> {error, {cookie, {Status, words(Out)}}}
    end.

%% @doc What `peer' runs: ssh, its options and destination, then on the host `env HOME=Dir erl'
%% with our arguments. The remote shell reads that command line: every argument of ours is
%% quoted for it (peer's own are names, base64 and numbers).
-spec exec(string(), [string()], beamscale_node:ssh(), string()) ->
    {{string(), [string()]}, [string()]}.
exec(Erl, Args, Ssh, Home) ->
    {{exe(), args(Ssh) ++ ["env", quote("HOME=" ++ Home), quote(Erl)]}, [quote(A) || A <- Args]}.

%% @doc Remove the cookie's directory: by the node itself once it is up (it has read the
%% cookie), else through ssh.
-spec forget(beamscale_node:ssh(), string(), node() | none) -> ok.
forget(Ssh, Dir, none) ->
    Args = ["-o", "ConnectTimeout=10" | args(Ssh)] ++ ["rm -rf -- " ++ quote(Dir)],
    _ = beamscale_os:cmd(exe(), Args, ?COOKIE_TIMEOUT),
    ok;
forget(Ssh, Dir, Node) ->
    try erpc:call(Node, file, del_dir_r, [Dir], ?COOKIE_TIMEOUT) of
        ok -> ok;
        {error, _} -> forget(Ssh, Dir, none)
    catch _:_ -> forget(Ssh, Dir, none)
    end.

%% @doc The node's host kills it if it is still there after a grace period (the remote twin of
%% killing by OS pid here). The process must still be the node (its command line names it): a
%% pid reused since is left alone. ssh runs with a time limit, so a host gone away cannot hang
%% the run.
-spec kill(beamscale_node:ssh(), string(), node()) -> ok.
kill(Ssh, OsPid, Node) ->
    [Name, _] = string:split(atom_to_list(Node), "@"),
    Is = "grep -q -- '" ++ Name ++ "@' /proc/" ++ OsPid ++ "/cmdline 2>/dev/null",
    %% After the kill, wait until the process is gone (or a zombie, whose command line is
    %% empty): `kill' returns before the process has ended.
    Wait = fun(N) -> "for i in $(seq " ++ integer_to_list(N) ++ "); do " ++ Is
                         ++ " || exit 0; sleep 0.2; done; " end,
    Script = Wait(10) ++ Is ++ " && kill -9 " ++ OsPid ++ "; " ++ Wait(25) ++ "exit 1",
    try beamscale_os:cmd(exe(), ["-o", "ConnectTimeout=5" | args(Ssh)] ++ [Script],
                         ?KILL_TIMEOUT) of
        _ -> ok
    catch error:_ -> ok
    end.

words(Out) -> string:trim(binary_to_list(Out)).

exe() ->
    case os:find_executable("ssh") of
        false -> error(no_ssh);
        Exe -> Exe
    end.

args(#{host := Host, args := Args} = Ssh) ->
    Dest = case Ssh of #{user := U} -> U ++ "@" ++ Host; _ -> Host end,
    ["-o", "BatchMode=yes"] ++ Args ++ [Dest].

quote(Arg) -> "'" ++ lists:flatten(string:replace(Arg, "'", "'\\''", all)) ++ "'".
