%% @doc What servers send unasked (a chat message, a publish, a ping), for a user whose session
%% has `bidi => true': while it waits (a think time, a `wait' step), the messages of the sockets
%% of its kinds that take pushes (`handle_push/3' and `push_socket/1' of
%% `beamscale_load_request') are handed to the kind, which may answer them; each `push' is
%% counted under `pushed' and its data is not kept in the mailbox or the connection's buffer.
%% A `wait' step waits for one push on its kind's connection, or fails with `{no_push, Ms}'.
-module(beamscale_load_push).

-export([check/2, wait/3, count_key/0]).

%% The longest `receive ... after' (ms).
-define(MAX_MS, 4294967295).
-define(COUNT, <<"pushed">>).

%% @doc The named count of pushes.
-spec count_key() -> binary().
count_key() -> ?COUNT.

%% @doc A `{wait, #{kind => K, target => T, timeout_ms => Ms}}' step, checked, as
%% `{wait, Module, Target, Ms}'; errors thrown as `{bad, Path, Message}'.
-spec check(map(), #{atom() => map()}) -> {wait, module(), atom(), pos_integer()}.
check(Spec, Targets) ->
    [bad([K], "unknown key (known: kind, target, timeout_ms)")
     || K <- maps:keys(Spec), not lists:member(K, [kind, target, timeout_ms])],
    Kind = maps:get(kind, Spec, undefined),
    Mod = case beamscale_load_kinds:by_name(Kind) of
              {ok, M} -> M;
              error -> bad([kind], "expected a request kind")
          end,
    [bad([kind], io_lib:format("~ts takes no pushed data (kinds that do: ~ts)",
                               [Kind, lists:join(", ", pushers())]))
     || not pushes(Mod)],
    Target = case {maps:get(target, Spec, undefined), maps:keys(Targets)} of
                 {undefined, [Only]} -> Only;
                 {undefined, _} -> bad([target], "missing (there are several)");
                 {T, Names} -> [bad([target], "unknown target") || not lists:member(T, Names)],
                               T
             end,
    case maps:get(timeout_ms, Spec, undefined) of
        Ms when is_integer(Ms), Ms > 0, Ms =< ?MAX_MS -> {wait, Mod, Target, Ms};
        _ -> bad([timeout_ms], "expected an integer from 1 to 4294967295")
    end.

pushers() -> [atom_to_list(M:name()) || M <- beamscale_load_kinds:all(), pushes(M)].

pushes(Mod) ->
    _ = code:ensure_loaded(Mod),
    erlang:function_exported(Mod, handle_push, 3).

-spec bad([atom()], iodata()) -> no_return().
bad(Path, Msg) -> throw({bad, [wait | Path], lists:flatten(Msg)}).

%% @doc Take pushes until monotonic time `Until' (native units), or, with `Want' a connection's
%% key `{Module, Target}', until that connection gets one: `{got | timeout, State}'. `State' is
%% the user's (`conns', `pushed' stores, `ctx''s metrics, `bidi').
-spec wait(integer(), {module(), atom()} | none, map()) -> {got | timeout, map()}.
wait(Until, Want, #{conns := Conns} = St) -> wait(Until, Want, St, socks(Conns)).

wait(Until, Want, St, Socks) ->
    Left = max(0, erlang:convert_time_unit(Until - erlang:monotonic_time(), native,
                                           millisecond)),
    receive
        Msg when is_tuple(Msg), tuple_size(Msg) >= 2, is_map_key(element(2, Msg), Socks) ->
            Key = maps:get(element(2, Msg), Socks),
            case take(Key, Msg, St) of
                {push, St1} when Key =:= Want -> {got, St1};
                {_, St1} -> wait(Until, Want, St1, resocks(Key, St, St1, Socks))
            end
    after Left -> {timeout, St}
    end.

%% The sockets whose messages are pushes, and the connection of each. A kind may push on
%% several sockets (xmpp over BOSH: its two connections).
socks(Conns) ->
    maps:from_list([{S, Key} || {{Mod, _} = Key, C} <- maps:to_list(Conns), pushes(Mod),
                                S <- sockets(Mod, C)]).

sockets(_Mod, closed) -> [];
sockets(Mod, C) -> lists:flatten([Mod:push_socket(C)]).

%% Made again only when the push changed its connection's sockets (closed it, or BOSH's next
%% poll): most pushes leave them, and the map was made anew at each (a chat's push, the
%% kinds' exports looked up again).
resocks({Mod, _} = Key, #{conns := Old}, #{conns := New}, Socks) ->
    case sockets(Mod, maps:get(Key, New)) =:= sockets(Mod, maps:get(Key, Old)) of
        true -> Socks;
        false -> socks(New)
    end.

take({Mod, _} = Key, Msg, #{conns := Conns, ctx := #{metrics := M}} = St) ->
    Stores = maps:get(pushed, St, #{}),
    {Event, Conn, Store} = Mod:handle_push(Msg, maps:get(Key, Conns),
                                           maps:get(Key, Stores, undefined)),
    %% Counted in a `bidi' session, whose run declares the count.
    [beamscale_load_metrics:count(M, ?COUNT) || Event =:= push, maps:get(bidi, St, false)],
    ok = beamscale_load_request:record_observed(M),
    {Event, St#{conns := Conns#{Key := Conn}, pushed => Stores#{Key => Store}}}.
