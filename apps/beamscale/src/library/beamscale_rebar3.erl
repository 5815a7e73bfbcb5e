%% @doc The rebar3 plugin: `rebar3 beamscale bench EXPR...' compiles the project, then runs
%% `beamscale bench' with the project's and its dependencies' ebin directories on the nodes
%% measured, so its own modules are there without `--code-path'. The app lists this module as
%% its `providers' (beamscale.app.src), which rebar3 reads of a plugin.
%%
%% rebar3's modules exist only inside rebar3: they are called through `rebar/3', so that
%% beamscale's own build, xref and dialyzer need no rebar3 sources.
-module(beamscale_rebar3).

-export([init/1, do/1, format_error/1]).

-define(PROVIDER, bench).
-define(NAMESPACE, beamscale).

%% @doc Register `beamscale bench' with rebar3.
-spec init(State) -> {ok, State} when State :: term().
init(State) ->
    Provider = rebar(providers, create,
                     [[{name, ?PROVIDER}, {namespace, ?NAMESPACE}, {module, ?MODULE},
                       {bare, true}, {deps, [{default, compile}]},
                       {example, "rebar3 beamscale bench 'my_mod:f().'"}, {opts, opts()},
                       {short_desc, "microbenchmarks of the project's code (beamscale bench)"},
                       {desc, "beamscale bench EXPR... with the project's code on the nodes"}]]),
    {ok, rebar(rebar_state, add_provider, [State, Provider])}.

%% @doc Run `beamscale bench' on the arguments, the project's code on the nodes' path.
-spec do(State) -> {ok, State} | {error, {?MODULE, term()}} when State :: term().
do(State) ->
    Args = rebar(rebar_state, command_args, [State]),
    _ = rebar(rebar_paths, set_paths, [[deps, plugins], State]),
    Own = [rebar(rebar_app_info, ebin_dir, [App])
           || App <- rebar(rebar_state, project_apps, [State])],
    Paths = Own ++ rebar(rebar_state, code_paths, [State, all_deps]),
    _ = [code:add_pathz(P) || P <- Paths],
    case beamscale_cli:dispatch(["bench" | Args]
                                ++ lists:append([["--code-path", P] || P <- Paths])) of
        0 -> {ok, State};
        Status -> {error, {?MODULE, {status, Status}}}
    end.

%% @doc The plugin's error: the command said why on its own line already.
-spec format_error(term()) -> iodata().
format_error({status, Status}) -> io_lib:format("beamscale bench exited with ~b", [Status]).

%% `bench''s own options, declared to rebar3's parser (which refuses others) as text: the
%% command's parser checks them.
opts() ->
    #{options := Spec} = beamscale_cmd_bench:info(),
    [{element(1, O), undefined, tl(tl(element(2, O))), getopt_type(element(3, O)),
      beamscale_args:help(O)} || O <- Spec].

getopt_type(flag) -> undefined;
getopt_type(_) -> string.

rebar(Mod, F, Args) -> apply(Mod, F, Args).
