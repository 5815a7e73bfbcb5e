%% @doc amoc's `amoc_config': a scenario's settings, declared by its `-required_variable(...)'
%% attributes and settled before the load (`beamscale_amoc_vars').
-module(amoc_config).

-export([get/1, get/2]).

%% @doc The value of the variable `Name' (`undefined' if it has none).
-spec get(atom()) -> term().
get(Name) -> get(Name, undefined).

%% @doc The value of the variable `Name' (`Default' when it is `undefined'). A name the
%% scenario did not declare throws `{invalid_setting, Name}', as amoc's does.
-spec get(atom(), term()) -> term().
get(Name, Default) when is_atom(Name) ->
    case maps:find(Name, beamscale_amoc_node:config()) of
        {ok, undefined} -> Default;
        {ok, V} -> V;
        error -> throw({invalid_setting, Name})
    end.
