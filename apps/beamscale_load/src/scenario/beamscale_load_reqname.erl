%% @doc Request names (Tsung's per-request table), pure: every request of a checked scenario
%% gets one, in a `{named, Name, Request}' step. A request's `label' (docs/scenario.md) names
%% it; without, an HTTP request is named by its method and path as written (`GET
%% /item/%%_id%%': a template, not each URL sent; the kind's `request_name/2'), another kind's
%% by its kind and `type' (`pgsql query'). Names are known before the run, so no reply can add
%% one; beyond the first ?MAX_NAMES distinct names (in the order of the sessions' steps)
%% requests count as `other'.
-module(beamscale_load_reqname).

-export([prepare/1, names/1, max_names/0, other/0, label/2]).

-define(MAX_NAMES, 64).
%% Longer names are cut (a long query string would widen every table).
-define(MAX_CHARS, 60).
-define(OTHER, <<"other">>).

%% @doc The scenario with each request in a `named' step (a labelled one keeps its label).
-spec prepare(map()) -> map().
prepare(#{sessions := Sessions} = Scenario) ->
    Named = [S#{steps := beamscale_load_steps:map(fun name/1, Steps)}
             || #{steps := Steps} = S <- Sessions],
    Kept = kept(Named),
    Cap = fun({named, N, R}) -> [{named, keep(N, Kept), R}];
             (Step) -> [Step]
          end,
    Scenario#{sessions := [S#{steps := beamscale_load_steps:map(Cap, Steps)}
                           || #{steps := Steps} = S <- Named]}.

%% @doc The names of a prepared scenario's requests, in order, each once.
-spec names(map()) -> [binary()].
names(#{sessions := Sessions}) ->
    dedup([N || #{steps := Steps} <- Sessions, {named, N, _} <- beamscale_load_steps:all(Steps)]).

%% @doc How many names are kept apart.
-spec max_names() -> pos_integer().
max_names() -> ?MAX_NAMES.

%% @doc The name of the requests beyond the first `max_names/0' names.
-spec other() -> binary().
other() -> ?OTHER.

%% @doc A request's `label' checked: printable text of 1 to ?MAX_CHARS characters; else thrown
%% as `{bad, Path, Message}' (the scenario's checks' way).
-spec label(term(), [atom()]) -> binary().
label(A, Path) when is_atom(A) -> label(atom_to_list(A), Path);
label(L, Path) when is_list(L); is_binary(L) ->
    case unicode:characters_to_list(L) of
        Cs when is_list(Cs), Cs =/= [], length(Cs) =< ?MAX_CHARS ->
            case io_lib:printable_unicode_list(Cs) of
                true -> unicode:characters_to_binary(Cs);
                false -> bad_label(Path)
            end;
        _ -> bad_label(Path)
    end;
label(_, Path) -> bad_label(Path).

-spec bad_label([atom()]) -> no_return().
bad_label(Path) ->
    throw({bad, Path, io_lib:format("expected printable text of 1 to ~b characters",
                                    [?MAX_CHARS])}).

%%% Internals

%% The walker maps a container's body first: a request is named as it is met, then a dynamic
%% request takes the name of its template, and a label replaces the name given inside it.
name({request, _, _, _, _} = R) -> [{named, default(R), R}];
name({dyn, D, {named, _, R}}) -> [{named, dyn_default(D, R), {dyn, D, R}}];
name({named, Label, {named, _, R}}) -> [{named, Label, R}];
name(Step) -> [Step].

kept(Sessions) ->
    All = dedup([N || #{steps := Steps} <- Sessions,
                      {named, N, _} <- beamscale_load_steps:all(Steps)]),
    sets:from_list(lists:sublist(All, ?MAX_NAMES), [{version, 2}]).

keep(Name, Kept) ->
    case sets:is_element(Name, Kept) of
        true -> Name;
        false -> ?OTHER
    end.

dedup(Names) ->
    {Out, _} = lists:foldl(fun(N, {Acc, Seen}) ->
                                   case sets:is_element(N, Seen) of
                                       true -> {Acc, Seen};
                                       false -> {[N | Acc], sets:add_element(N, Seen)}
                                   end
                           end, {[], sets:new([{version, 2}])}, Names),
    lists:reverse(Out).

%% A request as its kind names it (HTTP's method and path), else by its kind and type.
default({request, Mod, _, Spec, _}) -> named(Mod, static, Spec).

%% A dynamic one: from its template, as written.
dyn_default(#{raw := Raw}, {request, Mod, _, _, _}) -> named(Mod, dynamic, Raw).

named(Mod, How, Spec) ->
    case beamscale_load_kinds:request_name(Mod, How, Spec) of
        default -> typed(Mod, Spec);
        Name -> cut(Name)
    end.

typed(Mod, #{type := T}) when is_atom(T) -> cut([kind(Mod), " ", atom_to_binary(T)]);
typed(Mod, _) -> kind(Mod).

kind(Mod) ->
    _ = code:ensure_loaded(Mod),
    case erlang:function_exported(Mod, name, 0) of
        true -> atom_to_binary(Mod:name());
        false -> atom_to_binary(Mod)
    end.

text(T) ->
    case unicode:characters_to_binary(T) of
        B when is_binary(B) -> B;
        _ -> iolist_to_binary(io_lib:format("~0tp", [T]))
    end.

cut(IoData) ->
    B = text(IoData),
    case string:length(B) > ?MAX_CHARS of
        true -> text([string:slice(B, 0, ?MAX_CHARS - 3), "..."]);
        false -> B
    end.
