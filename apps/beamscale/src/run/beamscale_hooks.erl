%% @doc bencherl's `conf/pre_bench' and `conf/post_bench' of a handler: run before the nodes of
%% a job start and after they stop (once per launch of an environment point), with bencherl's
%% twelve arguments, in the directory above `bench/' (bencherl's root), as bencherl runs them.
%%
%% The arguments: schedulers, the erl installation's directory, the erl argument set, the
%% cookie, the slave node names, the number of slave nodes, the OTP alias, the extra code path,
%% the dependencies' paths, the erl environment, the erl, bencherl's root. The cookie is given
%% as "" (beamscale puts no cookie on a command line), the slave names as "" (they are started
%% after pre_bench); docs/benchmarks.md says so.
-module(beamscale_hooks).

-export([run/4, format_error/1]).

%% A hook starts servers (scalaris' ring) and may sleep for them; past this it is stuck.
-define(HOOK_TIMEOUT, 300000).

%% @doc Run hook `Which' of `Handler' for environment `Env', if the handler has one.
-spec run(pre_bench | post_bench, map(), beamscale_plan:env(), [file:filename()]) ->
    ok | {error, {?MODULE, term()}}.
run(Which, #{origin := {path, Dir}}, Env, CodePath) ->
    Hook = filename:join([Dir, "conf", atom_to_list(Which)]),
    case filelib:is_regular(Hook) of
        false -> ok;
        true -> run_hook(Which, Hook, root(Dir), args(Env, CodePath, root(Dir)))
    end;
run(_Which, _Handler, _Env, _CodePath) -> ok.

%% @doc One line for a hook that failed.
-spec format_error(term()) -> iodata().
format_error({hook, Which, Hook, Status, Output}) ->
    io_lib:format("~s (~ts) ~s: ~ts", [Which, Hook, status(Status), last_line(Output)]).

%%% Internals

run_hook(Which, Hook, Root, Args) ->
    %% cd to bencherl's root first: hooks name files relative to it (app/scalaris/...).
    Exec = case is_executable(Hook) of
               true -> [Hook];
               false -> ["/bin/sh", Hook]
           end,
    Script = "cd \"$1\" && shift && exec \"$@\"",
    case beamscale_os:cmd("/bin/sh", ["-c", Script, "sh", Root | Exec ++ Args], ?HOOK_TIMEOUT) of
        {0, _} -> ok;
        {Status, Output} -> {error, {?MODULE, {hook, Which, Hook, Status, Output}}}
    end.

%% bench/NAME/conf/.. -> bench/NAME -> bench -> the root above it.
root(Dir) -> filename:dirname(filename:dirname(Dir)).

args(#{schedulers := S, erl := Erl, flags := Flags, otp := Otp, nodes := N}, CodePath, Root) ->
    [integer_to_list(S), filename:dirname(filename:dirname(Erl)), Flags, "", "",
     integer_to_list(N - 1), atom_to_list(Otp), lists:flatten(lists:join(" ", CodePath)), "", "",
     Erl, Root].

is_executable(File) ->
    case file:read_file_info(File) of
        {ok, Info} -> element(8, Info) band 8#111 =/= 0;
        _ -> false
    end.

status(timeout) -> "timed out";
status(N) -> io_lib:format("exited with ~b", [N]).

last_line(Output) ->
    case [L || L <- binary:split(Output, <<"\n">>, [global]), L =/= <<>>] of
        [] -> "no output";
        Lines -> lists:last(Lines)
    end.
