%% @doc `mix beamscale.bench EXPR... [OPTIONS]': `beamscale bench' from a mix project that has
%% beamscale among its dependencies, the project compiled first and its code (and Elixir's) on
%% the nodes measured without `--mix' or `--code-path'. Written in Erlang so that the rebar3
%% app carries it: mix finds a task by its module's name.
-module('Elixir.Mix.Tasks.Beamscale.Bench').

-export([run/1, '__info__'/1]).
%% What `mix help' says of the task (mix reads its attributes as an Elixir module's).
-shortdoc("Microbenchmarks of expressions in the project's code (beamscale bench)").

-define(MIX_TASK, <<"Elixir.Mix.Task">>).

%% @doc Mix's entry: the arguments as binaries, as `beamscale bench' takes them.
-spec run([binary()]) -> ok.
run(Args) ->
    %% Mix is there whenever mix runs this task: its module is named at run time only, so the
    %% build of beamscale needs no Elixir.
    MixTask = binary_to_existing_atom(?MIX_TASK),
    _ = MixTask:run(<<"compile">>, []),
    Paths = lists:append([["--code-path", D] || D <- beamscale:code_path()]),
    Status = beamscale_cli:dispatch(["bench" | [binary_to_list(A) || A <- Args]] ++ Paths),
    Status =:= 0 orelse erlang:halt(Status),
    ok.

%% @doc What mix asks an Elixir module: its attributes (`shortdoc'), nothing else.
-spec '__info__'(atom()) -> term().
'__info__'(attributes) -> module_info(attributes);
'__info__'(module) -> ?MODULE;
'__info__'(_) -> [].
