%% @doc The registry of request kinds: the one list of the modules that implement
%% `beamscale_load_request'. Everything else that needs a kind's terms name, its Tsung session
%% type and element, what dynamic features it allows or its error text asks here or the module
%% itself; nothing else names a kind. A new kind is its module(s) and one line in `all/0'.
%%
%% The declarations most kinds share are optional callbacks, read here with their defaults, so
%% a kind states only what differs: `features/0' none, `sockets/1' one a target, `tsung/0'
%% `none', `format_error/1' the reason as a term, `preflight/2' nothing to check.
-module(beamscale_load_kinds).

-export([all/0, by_name/1, names/0, by_tsung_type/1, by_element/1, tsung_types/0,
         tsung_elements/0, allows/2, is_kind/1]).
-export([features/1, sockets/2, tsung/1, format_error/2, preflight/3, variant/2,
         request_name/3]).

%% @doc Every request kind's module, in the order names are listed in messages.
-spec all() -> [module()].
all() ->
    [beamscale_load_http,
     beamscale_load_h2,
     beamscale_load_grpc,
     beamscale_load_rpc,
     beamscale_load_tcp,
     beamscale_load_raw,
     beamscale_load_websocket,
     beamscale_load_mysql,
     beamscale_load_pgsql,
     beamscale_load_mqtt,
     beamscale_load_amqp,
     beamscale_load_ldap,
     beamscale_load_fs,
     beamscale_load_xmpp].

%% @doc The module of a terms step name.
-spec by_name(atom()) -> {ok, module()} | error.
by_name(Name) -> find(fun(M) -> M:name() =:= Name end).

%% @doc The terms step names, in registry order.
-spec names() -> [atom()].
names() -> [M:name() || M <- all()].

%% @doc The module of a Tsung session type (`"ts_http"'), or of another type it reads as its
%% own (`"ts_webdav"': HTTP with WebDAV's methods).
-spec by_tsung_type(string()) -> {ok, module()} | error.
by_tsung_type(Type) -> find(fun(M) -> lists:member(Type, types(M)) end).

%% @doc The module whose Tsung element is `Element' (`http', `raw'...).
-spec by_element(atom()) -> {ok, module()} | error.
by_element(Element) -> find(fun(M) -> tsung(M, element) =:= Element end).

%% @doc The Tsung session types the kinds read.
-spec tsung_types() -> [string()].
tsung_types() -> [T || M <- all(), T <- types(M)].

types(M) ->
    case tsung(M) of
        none -> [];
        #{type := T} = Ts -> [T | maps:get(aliases, Ts, [])]
    end.

%% @doc The Tsung elements the kinds read.
-spec tsung_elements() -> [atom()].
tsung_elements() -> [E || M <- all(), E <- [tsung(M, element)], E =/= none].

%% @doc Whether kind `Mod' allows the dynamic feature `Feature' (see
%% `beamscale_load_request:feature()').
-spec allows(module(), beamscale_load_request:feature()) -> boolean().
allows(Mod, Feature) -> lists:member(Feature, features(Mod)).

%% @doc Whether `Mod' is a registered kind (whose error reasons it formats itself).
-spec is_kind(module()) -> boolean().
is_kind(Mod) -> lists:member(Mod, all()).

%% @doc The dynamic request keys kind `Mod' serves (none unless it says).
-spec features(module()) -> [beamscale_load_request:feature()].
features(Mod) -> declared(Mod, features, [], []).

%% @doc The sockets a user of kind `Mod' holds to `Target' (one unless it says).
-spec sockets(module(), map()) -> non_neg_integer().
sockets(Mod, Target) -> declared(Mod, sockets, [Target], 1).

%% @doc What kind `Mod' reads of Tsung's XML (`none' unless it says).
-spec tsung(module()) -> beamscale_load_request:tsung().
tsung(Mod) -> declared(Mod, tsung, [], none).

%% @doc A reason of kind `Mod' in its words, or as a term when it has none of its own.
-spec format_error(module(), term()) -> iodata().
format_error(Mod, Reason) ->
    case exported(Mod, format_error, 1) of
        true -> Mod:format_error(Reason);
        false -> io_lib:format("~0tp", [Reason])
    end.

%% @doc Before the load: a request step of kind `Mod' against its resolved target (`ok' unless
%% the kind has a `preflight/2' to say otherwise).
-spec preflight(module(), map(), map()) -> ok | {error, {module(), term()}}.
preflight(Mod, Spec, Target) -> declared(Mod, preflight, [Spec, Target], ok).

%% @doc The kind and spec a terms step of kind `Mod' is: its own, unless its `variant/1' names
%% another kind (`http''s `version => 2', an `http2' step).
-spec variant(module(), map()) -> {module(), map()}.
variant(Mod, Spec) ->
    case declared(Mod, variant, [Spec], same) of
        same -> {Mod, Spec};
        {Name, Spec1} -> {ok, Mod1} = by_name(Name),
                         {Mod1, Spec1}
    end.

%% @doc A request's name without a label, as kind `Mod' gives it (`default' unless it says):
%% from its checked spec (`static') or a dynamic request's template (`dynamic').
-spec request_name(module(), static | dynamic, map()) -> unicode:chardata() | default.
request_name(Mod, How, Spec) -> declared(Mod, request_name, [How, Spec], default).

%%% Internals

declared(Mod, F, Args, Default) ->
    case exported(Mod, F, length(Args)) of
        true -> apply(Mod, F, Args);
        false -> Default
    end.

exported(Mod, F, Arity) ->
    _ = code:ensure_loaded(Mod),
    erlang:function_exported(Mod, F, Arity).

tsung(Mod, Key) ->
    case tsung(Mod) of
        none -> none;
        #{Key := V} -> V
    end.

find(Pred) ->
    case lists:search(Pred, all()) of
        {value, M} -> {ok, M};
        false -> error
    end.
