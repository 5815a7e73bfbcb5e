%% @doc amoc's entry point `amoc:do/3' (docs/amoc.md): a scenario module already loaded in this
%% node run as `beamscale load --amoc' runs it, on this node, to its end: its run directory
%% `runs/load-TIMESTAMP' under the current directory, its closing lines printed. Here, not in
%% the app `beamscale_amoc': it starts a load, the command node's work, and never goes to a
%% load node.
-module(amoc).

-export([do/3]).

%% @doc Run `Scenario' with `Users' users, its required variables from `Settings' (as `--set':
%% before `AMOC_*' and the defaults); `ok' once the run ended well, `{error, Reason}' else.
-spec do(module(), pos_integer(), [{atom(), term()}]) -> ok | {error, term()}.
do(Scenario, Users, Settings) when is_atom(Scenario), is_list(Settings) ->
    case code:ensure_loaded(Scenario) of
        {module, _} ->
            %% A value goes as `--set''s text, read back as a term (atoms it names exist).
            Sets = [lists:flatten([atom_to_list(K), $=, io_lib:format("~0tp", [V])])
                    || {K, V} <- Settings, is_atom(K)],
            Opts = #{amoc => source(Scenario), amoc_module => Scenario, users => Users,
                     set => Sets},
            case beamscale_cmd_load:do(#{opts => Opts, args => []}) of
                ok -> ok;
                {error, _} = Error -> Error;
                Other -> {error, Other}
            end;
        {error, Why} -> {error, {not_loaded, Scenario, Why}}
    end.

%% Where the module was compiled from (the run's scenario name and directory), else here.
source(Mod) ->
    case proplists:get_value(source, Mod:module_info(compile)) of
        Source when is_list(Source) -> Source;
        _ -> filename:absname(atom_to_list(Mod) ++ ".erl")
    end.
