%% @doc "Locks that grew" (lcnt), pure: per benchmark and environment group (release, emulator
%% flags, nodes), the locks whose collision share rose from the fewest to the most schedulers,
%% from the sampler's `lcnt.csv' rows (each job's lock counts, summed over launches and nodes).
%% The share (collisions per try) does not depend on how long a job ran; the counts are shown
%% beside it.
-module(beamscale_report_lcnt).

-export([grew/1, grew_html/1]).

-define(TOP, 10).

-type lock() :: #{lock := binary(), pct_low := float(), pct_high := float(),
                  colls_low := non_neg_integer(), colls_high := non_neg_integer()}.

%% @doc `{Benchmark, Group, LowSchedulers, HighSchedulers, Locks}', the locks sorted by how much
%% their collision share rose, at most ten; groups measured at one scheduler count are left out.
-spec grew([#{atom() => binary()}]) ->
    [{binary(), binary(), pos_integer(), pos_integer(), [lock()]}].
grew(Rows) ->
    Sums = lists:foldl(fun add/2, #{}, [R || #{status := <<"ok">>} = R <- Rows]),
    Groups = lists:usort([{B, G} || {B, G, _S, _L} <- maps:keys(Sums)]),
    [Grew || {B, G} <- Groups, Grew <- [group(B, G, Sums)], Grew =/= none].

add(#{benchmark := B, env := E, lock := L, tries := T, collisions := C}, Acc) ->
    [Otp, Args, S, N] = beamscale_format_env:fields(E),
    Group = iolist_to_binary([Otp, $/, Args, "/nodes ", integer_to_binary(N)]),
    maps:update_with({B, Group, S, L},
                     fun({T0, C0}) -> {T0 + int(T), C0 + int(C)} end, {int(T), int(C)}, Acc).

group(B, G, Sums) ->
    Mine = [{S, L, TC} || {{B1, G1, S, L}, TC} <- maps:to_list(Sums), {B1, G1} =:= {B, G}],
    case lists:usort([S || {S, _, _} <- Mine]) of
        [_] -> none;
        Counts ->
            {Low, High} = {hd(Counts), lists:last(Counts)},
            Locks = lists:usort([L || {_, L, _} <- Mine]),
            Rows = [lock(L, at(Low, L, Mine), at(High, L, Mine)) || L <- Locks],
            Sorted = lists:sort(fun(X, Y) -> rise(X) >= rise(Y) end, Rows),
            {B, G, Low, High, lists:sublist(Sorted, ?TOP)}
    end.

at(S, L, Mine) ->
    case [TC || {S1, L1, TC} <- Mine, {S1, L1} =:= {S, L}] of
        [TC] -> TC;
        [] -> {0, 0}
    end.

lock(L, {TL, CL}, {TH, CH}) ->
    #{lock => L, pct_low => pct(CL, TL), pct_high => pct(CH, TH), colls_low => CL,
      colls_high => CH}.

rise(#{pct_low := L, pct_high := H}) -> H - L.

pct(_, 0) -> 0.0;
pct(C, T) -> 100 * C / T.

int(<<>>) -> 0;
int(B) -> binary_to_integer(B).

%% @doc The tables, one per benchmark and group; nothing without lock counts at two scheduler
%% counts.
-spec grew_html([#{atom() => binary()}]) -> iodata().
grew_html(Rows) ->
    [[beamscale_report_html:el(h3, fmt("Locks that grew: ~ts, ~ts, ~b to ~b schedulers",
                                       [B, G, Lo, Hi])),
      beamscale_report_html:table(
        ["lock", fmt("collisions % (~b)", [Lo]), fmt("collisions % (~b)", [Hi]),
         "rise (points)", fmt("collisions (~b)", [Lo]), fmt("collisions (~b)", [Hi])],
        [[L, r2(PL), r2(PH), r2(PH - PL), CL, CH]
         || #{lock := L, pct_low := PL, pct_high := PH, colls_low := CL, colls_high := CH}
                <- Locks])]
     || {B, G, Lo, Hi, Locks} <- grew(Rows)].

fmt(Format, Args) -> unicode:characters_to_binary(io_lib:format(Format, Args)).

r2(X) -> list_to_binary(io_lib:format("~.2f", [float(X)])).
