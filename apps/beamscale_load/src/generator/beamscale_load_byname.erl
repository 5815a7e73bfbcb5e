%% @doc A load run's figures by request name (Tsung's per-request table): requests, errors,
%% bytes and latency from the intended start, for each name `beamscale_load_reqname' gave the
%% scenario's requests. Shared by the users without a server process.
%%
%% A name's counts and its latencies' sum are a `counters' array of its own (write_concurrency:
%% no key that every user of a name updates, as the ETS counters a name were: 4-5 updates a
%% request on one key). A user finds its name's array in its process dictionary, else once in
%% the names' table (the first user of a name makes it there).
%%
%% A full histogram per name (23 554 atomics) would cost a read of every slot each second
%% (measured 5 ms a name here): the latency of a name is kept sparse instead, an ETS counter per
%% name and bucket slot used (`beamscale_stats_hist:slot/1'), so a take reads only what was
%% recorded, and users of a name update the same key only when their latencies share a bucket.
%%
%% The counters kept by name are those the run's counter list marks (`beamscale_format_load:
%% by_name/0'), each at its index in a name's array (the table's map, in the user's process
%% dictionary with the array); the array's last counter is the latencies' sum.
%%
%% A user marks the request it runs (`start/3' ... `stop/0', in its process dictionary), so
%% that `beamscale_load_metrics' counts the errors, bytes and latency a kind records meanwhile
%% under its name without the kinds knowing names. A tagged request is counted the same way
%% under each of its tag pairs too (keys `{tag, Pair}' beside the names): an untagged one pays
%% for the empty list of pairs only.
-module(beamscale_load_byname).

-export([new/0, start/3, current/0, stop/0, error/0, add/2, latency/1, take/1, merge/2]).
-export_type([tab/0, figures/0]).

-define(KEY, '$beamscale_request_name').

%% The names' arrays (read once by each user of a name), the latencies' bucket counts, and
%% each counter's index in an array.
-opaque tab() :: {Arrays :: ets:tid(), Slots :: ets:tid(), #{atom() => pos_integer()}}.
%% One interval of one name.
-type figures() :: #{requests := non_neg_integer(), errors := non_neg_integer(),
                     bytes_sent := non_neg_integer(), bytes_received := non_neg_integer(),
                     latency := beamscale_stats_hist:snapshot()}.

%% @doc A new table.
-spec new() -> tab().
new() ->
    Fields = beamscale_format_load:by_name() ++ [sum],
    {ets:new(?MODULE, [set, public, {read_concurrency, true}]),
     ets:new(?MODULE, [set, public, {write_concurrency, true}]),
     maps:from_list(lists:zip(Fields, lists:seq(1, length(Fields))))}.

%% @doc The calling user starts a request named `Name', tagged `Tags': counted, and what follows
%% is its own.
-spec start(tab(), binary(), [binary()]) -> ok.
start({_, _, #{requests := I}} = Tab, Name, Tags) ->
    C = array(Tab, Name),
    Extra = [{{tag, T}, array(Tab, {tag, T})} || T <- Tags],
    put(?KEY, {Tab, Name, C, Extra}),
    counters:add(C, I, 1),
    [counters:add(TC, I, 1) || {_, TC} <- Extra],
    ok.

%% @doc The name of the calling user's current request (`none' outside a named one).
-spec current() -> binary() | none.
current() ->
    case get(?KEY) of
        {_Tab, Name, _, _} -> Name;
        undefined -> none
    end.

%% @doc The calling user's request is over.
-spec stop() -> ok.
stop() ->
    _ = erase(?KEY),
    ok.

%% @doc One error of the calling user's request (none running: nothing).
-spec error() -> ok.
error() -> bump(errors, 1).

%% @doc `N' more of the counter `Which' for the calling user's request, if kept by name.
-spec add(atom(), non_neg_integer()) -> ok.
add(_Which, 0) -> ok;
add(Which, N) -> bump(Which, N).

%% @doc The latency (microseconds, from the intended start) of the calling user's request.
-spec latency(integer()) -> ok.
latency(Us) ->
    case get(?KEY) of
        {{_, Slots, #{sum := I}}, Name, C, Extra} ->
            Slot = beamscale_stats_hist:slot(Us),
            slot_latency(Slots, I, Name, C, Slot, Us),
            [slot_latency(Slots, I, K, KC, Slot, Us) || {K, KC} <- Extra],
            ok;
        undefined -> ok
    end.

%% @doc The interval's figures by name and by tag pair, reset (what is read is subtracted: a
%% count landing meanwhile stays for the next take).
-spec take(tab()) -> {#{binary() => figures()}, #{binary() => figures()}}.
take(Tab) ->
    All = take_all(Tab),
    {maps:filter(fun(K, _) -> is_binary(K) end, All),
     maps:from_list([{T, F} || {{tag, T}, F} <- maps:to_list(All)])}.

take_all({Arrays, Slots, Index}) ->
    Read = [{K, N} || {K, N} <- ets:tab2list(Slots), N > 0,
                      ets:update_counter(Slots, K, -N) >= 0],
    Counts = [{Name, [{F, take_counter(C, I)} || {F, I} <- maps:to_list(Index)]}
              || {Name, C} <- ets:tab2list(Arrays)],
    maps:from_list([{Name, figures(Cs, [{S, N} || {{Nm, S}, N} <- Read, Nm =:= Name])}
                    || {Name, Cs} <- Counts,
                       lists:any(fun({_, N}) -> N > 0 end, Cs)
                           orelse lists:keymember(Name, 1, [K || {K, _} <- Read])]).

%% @doc Two intervals' figures together (by name or by tag).
-spec merge(#{binary() => figures()}, #{binary() => figures()}) -> #{binary() => figures()}.
merge(A, B) ->
    maps:fold(fun(Name, F, Acc) ->
                      Acc#{Name => case Acc of
                                       #{Name := G} -> add_figures(F, G);
                                       _ -> F
                                   end}
              end, B, A).

%%% Internals

%% The name's array: from the process dictionary, else from the table (made there first).
array({Arrays, _, _} = Tab, Name) ->
    case get({?MODULE, Arrays, Name}) of
        undefined ->
            C = case ets:lookup(Arrays, Name) of
                    [{_, Found}] -> Found;
                    [] -> made(Tab, Name)
                end,
            put({?MODULE, Arrays, Name}, C),
            C;
        C -> C
    end.

%% Two users making a name's array at once: the first one in the table is the one.
made({Arrays, _, Index}, Name) ->
    C = counters:new(map_size(Index), [write_concurrency]),
    case ets:insert_new(Arrays, {Name, C}) of
        true -> C;
        false -> ets:lookup_element(Arrays, Name, 2)
    end.

%% A counter not kept by name (a database's rows), or no named request running: nothing.
bump(Field, N) ->
    case get(?KEY) of
        {{_, _, #{Field := I}}, _, C, []} -> counters:add(C, I, N);
        {{_, _, #{Field := I}}, _, C, Extra} ->
            counters:add(C, I, N),
            lists:foreach(fun({_, KC}) -> counters:add(KC, I, N) end, Extra);
        _ -> ok
    end.

%% One latency under one key (a name or a tag pair): its bucket's count and the sum.
slot_latency(Slots, I, K, C, Slot, Us) ->
    Key = {K, Slot},
    _ = ets:update_counter(Slots, Key, 1, {Key, 0}),
    counters:add(C, I, max(0, Us)).

%% As the run's counters: what was read is subtracted, keeping what lands meanwhile.
take_counter(C, I) ->
    N = counters:get(C, I),
    ok = counters:sub(C, I, N),
    N.

figures(Counts, SlotCounts) ->
    {Sum, Named} = maps:take(sum, maps:from_list(Counts)),
    Named#{latency => beamscale_stats_hist:from_slots(maps:from_list(SlotCounts), Sum)}.

add_figures(#{latency := L1} = F, #{latency := L2} = G) ->
    maps:merge_with(fun(_, X, Y) when is_integer(X) -> X + Y;
                       (_, _, _) -> beamscale_stats_hist:merge(L1, L2)
                    end, F, G).
