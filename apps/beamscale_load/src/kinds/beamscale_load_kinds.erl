%% @doc The registry of request kinds: the one list of the modules that implement
%% `beamscale_load_request'. Everything else that needs a kind's terms name, its Tsung session
%% type and element, what dynamic features it allows or its error text asks here or the module
%% itself; nothing else names a kind. A new kind is its module(s) and one line in `all/0'.
-module(beamscale_load_kinds).

-export([all/0, by_name/1, names/0, by_tsung_type/1, by_element/1, tsung_types/0,
         tsung_elements/0, allows/2, is_kind/1]).

%% @doc Every request kind's module, in the order names are listed in messages.
-spec all() -> [module()].
all() ->
    [beamscale_load_http,
     beamscale_load_rpc,
     beamscale_load_tcp,
     beamscale_load_raw,
     beamscale_load_websocket,
     beamscale_load_mysql,
     beamscale_load_pgsql,
     beamscale_load_mqtt,
     beamscale_load_xmpp].

%% @doc The module of a terms step name.
-spec by_name(atom()) -> {ok, module()} | error.
by_name(Name) -> find(fun(M) -> M:name() =:= Name end).

%% @doc The terms step names, in registry order.
-spec names() -> [atom()].
names() -> [M:name() || M <- all()].

%% @doc The module of a Tsung session type (`"ts_http"').
-spec by_tsung_type(string()) -> {ok, module()} | error.
by_tsung_type(Type) -> find(fun(M) -> tsung(M, type) =:= Type end).

%% @doc The module whose Tsung element is `Element' (`http', `raw'...).
-spec by_element(atom()) -> {ok, module()} | error.
by_element(Element) -> find(fun(M) -> tsung(M, element) =:= Element end).

%% @doc The Tsung session types the kinds read.
-spec tsung_types() -> [string()].
tsung_types() -> [T || M <- all(), T <- [tsung(M, type)], T =/= none].

%% @doc The Tsung elements the kinds read.
-spec tsung_elements() -> [atom()].
tsung_elements() -> [E || M <- all(), E <- [tsung(M, element)], E =/= none].

%% @doc Whether kind `Mod' allows the dynamic feature `Feature' (see
%% `beamscale_load_request:feature()').
-spec allows(module(), beamscale_load_request:feature()) -> boolean().
allows(Mod, Feature) -> lists:member(Feature, Mod:features()).

%% @doc Whether `Mod' is a registered kind (whose error reasons it formats itself).
-spec is_kind(module()) -> boolean().
is_kind(Mod) -> lists:member(Mod, all()).

tsung(Mod, Key) ->
    case Mod:tsung() of
        none -> none;
        #{Key := V} -> V
    end.

find(Pred) ->
    case lists:search(Pred, all()) of
        {value, M} -> {ok, M};
        false -> error
    end.
