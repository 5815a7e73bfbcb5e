%% @doc A load run's figures by request name (Tsung's per-request table): requests, errors,
%% bytes and latency from the intended start, for each name `beamscale_load_reqname' gave the
%% scenario's requests. One public ETS table shared by the users, no server process.
%%
%% A full histogram per name (23 554 atomics) would cost a read of every slot each second
%% (measured 5 ms a name here): the latency of a name is kept sparse instead, a counter per
%% bucket slot used (`beamscale_stats_hist:slot/1'), so a take reads only what was recorded.
%%
%% A user marks the request it runs (`start/2' ... `stop/0', in its process dictionary), so
%% that `beamscale_load_metrics' counts the errors, bytes and latency a kind records meanwhile
%% under its name without the kinds knowing names.
-module(beamscale_load_byname).

-export([new/0, start/2, current/0, stop/0, error/0, add/2, latency/1, take/1, merge/2]).
-export_type([tab/0, figures/0]).

-define(KEY, '$beamscale_request_name').

-opaque tab() :: ets:tid().
%% One interval of one name.
-type figures() :: #{requests := non_neg_integer(), errors := non_neg_integer(),
                     bytes_sent := non_neg_integer(), bytes_received := non_neg_integer(),
                     latency := beamscale_stats_hist:snapshot()}.

%% @doc A new table.
-spec new() -> tab().
new() -> ets:new(?MODULE, [set, public, {write_concurrency, true}]).

%% @doc The calling user starts a request named `Name': counted, and what follows is its own.
-spec start(tab(), binary()) -> ok.
start(Tab, Name) ->
    put(?KEY, {Tab, Name}),
    bump(Tab, {Name, requests}, 1).

%% @doc The name of the calling user's current request (`none' outside a named one).
-spec current() -> binary() | none.
current() ->
    case get(?KEY) of
        {_Tab, Name} -> Name;
        undefined -> none
    end.

%% @doc The calling user's request is over.
-spec stop() -> ok.
stop() ->
    _ = erase(?KEY),
    ok.

%% @doc One error of the calling user's request (none running: nothing).
-spec error() -> ok.
error() -> current(fun(Tab, Name) -> bump(Tab, {Name, errors}, 1) end).

%% @doc Bytes (`bytes_sent' or `bytes_received') of the calling user's request.
-spec add(atom(), non_neg_integer()) -> ok.
add(_Which, 0) -> ok;
add(Which, N) -> current(fun(Tab, Name) -> bump(Tab, {Name, Which}, N) end).

%% @doc The latency (microseconds, from the intended start) of the calling user's request.
-spec latency(integer()) -> ok.
latency(Us) ->
    current(fun(Tab, Name) ->
                    bump(Tab, {Name, {slot, beamscale_stats_hist:slot(Us)}}, 1),
                    bump(Tab, {Name, sum}, max(0, Us))
            end).

%% @doc The interval's figures by name, reset (what is read is subtracted: a count landing
%% meanwhile stays for the next take).
-spec take(tab()) -> #{binary() => figures()}.
take(Tab) ->
    Read = [{K, N} || {K, N} <- ets:tab2list(Tab), N > 0,
                      ets:update_counter(Tab, K, -N) >= 0],
    Names = lists:usort([Name || {{Name, _}, _} <- Read]),
    maps:from_list([{Name, figures([{What, N} || {{Nm, What}, N} <- Read, Nm =:= Name])}
                    || Name <- Names]).

%% @doc Two intervals' figures together.
-spec merge(#{binary() => figures()}, #{binary() => figures()}) -> #{binary() => figures()}.
merge(A, B) ->
    maps:fold(fun(Name, F, Acc) ->
                      Acc#{Name => case Acc of
                                       #{Name := G} -> add_figures(F, G);
                                       _ -> F
                                   end}
              end, B, A).

%%% Internals

figures(Pairs) ->
    Get = fun(K) -> proplists:get_value(K, Pairs, 0) end,
    Slots = maps:from_list([{S, N} || {{slot, S}, N} <- Pairs]),
    #{requests => Get(requests), errors => Get(errors), bytes_sent => Get(bytes_sent),
      bytes_received => Get(bytes_received),
      latency => beamscale_stats_hist:from_slots(Slots, Get(sum))}.

add_figures(#{latency := L1} = F, #{latency := L2} = G) ->
    maps:merge_with(fun(_, X, Y) when is_integer(X) -> X + Y;
                       (_, _, _) -> beamscale_stats_hist:merge(L1, L2)
                    end, F, G).

current(Fun) ->
    case get(?KEY) of
        {Tab, Name} -> Fun(Tab, Name);
        undefined -> ok
    end.

bump(Tab, Key, N) ->
    _ = ets:update_counter(Tab, Key, N, {Key, 0}),
    ok.
