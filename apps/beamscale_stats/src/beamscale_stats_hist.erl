%% @doc A log-linear latency histogram in the manner of HdrHistogram: 3 significant digits over
%% 1 µs .. 1 h (values are integers, microseconds by convention). Many processes record into one
%% histogram at once: each bucket is an `atomics' slot, so there is no lock and no server process.
%%
%% A snapshot is a plain term (a sparse map of bucket counts plus count, sum, min and max): it can
%% be sent to another node, merged (associative and commutative) and queried for any percentile.
%% `take/1' snapshots and resets at once, without losing a concurrent record, so the same live
%% histogram yields one snapshot per interval.
-module(beamscale_stats_hist).

-export([new/0, record/2, take/1, snapshot/1, empty/0, merge/2, merge/1,
         percentile/2, percentiles/2, mean/1, stddev/1, max/1, min/1, count/1, sum/1, highest/0,
         at_most/2, slot/1, from_slots/2]).
-export_type([hist/0, snapshot/0]).

%% 2048 sub-buckets per power of two: a bucket is at most 1/1024 of its value wide, which is
%% better than 3 significant digits (1/1000).
-define(SUB_BITS, 11).
-define(HALF_BITS, 10).
-define(HALF, 1024).
-define(SUB_MASK, 2047).
%% 1 hour in µs fits in 2^32; values above are clamped to it.
-define(HIGHEST, 3600000000).
-define(BUCKETS, 22).
-define(SLOTS, ((?BUCKETS + 1) * ?HALF)).
%% Extra atomics slots after the buckets.
-define(SUM, (?SLOTS + 1)).
-define(MAX, (?SLOTS + 2)).
%% The maximum's slot when nothing was recorded since the histogram was made or taken.
-define(IDLE, -1).
%% A flag per chunk of ?HALF slots after the maximum, and after those a flag per piece of
%% ?PIECE slots: set by a record in the chunk (the piece), so that a take reads the piece flags
%% of the chunks recorded into and the slots of the pieces recorded into (values cluster in a
%% few). A scan of all 23 552 slots once a second per histogram was the main fixed cost of an
%% xmpp load run; with chunk flags alone, reading each flagged chunk's 1024 slots was still
%% two thirds of the calls a chat cost at 20 users (cprof of bench/xmpp_vs_tsung.sh's session).
-define(FLAG(I), (?MAX + 1 + ((I) bsr ?HALF_BITS))).
-define(CHUNKS, (?SLOTS div ?HALF)).
-define(PIECE_BITS, 5).
-define(PIECE, (1 bsl ?PIECE_BITS)).
-define(PIECE_FLAG(I), (?MAX + ?CHUNKS + 1 + ((I) bsr ?PIECE_BITS))).
-define(PIECES, (?SLOTS div ?PIECE)).

-opaque hist() :: atomics:atomics_ref().
-type snapshot() :: #{count := non_neg_integer(), sum := non_neg_integer(),
                      max := non_neg_integer(), min := non_neg_integer() | undefined,
                      counts := #{non_neg_integer() => pos_integer()}}.

%% @doc A new, empty live histogram.
-spec new() -> hist().
new() ->
    Ref = atomics:new(?MAX + ?CHUNKS + ?PIECES, [{signed, true}]),
    ok = atomics:put(Ref, ?MAX, ?IDLE),
    Ref.

%% @doc The highest value tracked; larger values are recorded as this one.
-spec highest() -> pos_integer().
highest() -> ?HIGHEST.

%% @doc Record one value (negative values count as 0).
-spec record(hist(), integer()) -> ok.
record(Ref, V0) ->
    V = clamp(V0),
    I = index(V),
    atomics:add(Ref, I + 1, 1),
    %% After the count, the piece's flag before the chunk's (a take resets the chunk's first):
    %% a take that reset a flag before it was read here sees the flag again next time.
    %% Written only when clear: a read keeps the flags' cache line shared between schedulers.
    set_flag(Ref, ?PIECE_FLAG(I)),
    set_flag(Ref, ?FLAG(I)),
    atomics:add(Ref, ?SUM, V),
    raise(Ref, V, atomics:get(Ref, ?MAX)).

set_flag(Ref, F) ->
    case atomics:get(Ref, F) of
        0 -> atomics:put(Ref, F, 1);
        _ -> ok
    end.

clamp(V) when V < 0 -> 0;
clamp(V) when V > ?HIGHEST -> ?HIGHEST;
clamp(V) -> V.

%% A compare-and-swap loop; the common case (no new maximum) is one read.
raise(Ref, V, Max) when V > Max ->
    case atomics:compare_exchange(Ref, ?MAX, Max, V) of
        ok -> ok;
        Now -> raise(Ref, V, Now)
    end;
raise(_, _, _) -> ok.

%% @doc The bucket slot (0-based) a value is counted in, for a histogram kept elsewhere (a
%% sparse one: `from_slots/2' makes it a snapshot).
-spec slot(integer()) -> non_neg_integer().
slot(V) -> index(clamp(V)).

%% @doc The snapshot of slot counts (`slot/1') and the values' sum; its maximum is the highest
%% value of the highest slot (within 1/1000, as every figure here).
-spec from_slots(#{non_neg_integer() => pos_integer()}, non_neg_integer()) -> snapshot().
from_slots(Counts, _Sum) when map_size(Counts) =:= 0 -> empty();
from_slots(Counts, Sum) ->
    {_, High} = range(lists:max(maps:keys(Counts))),
    #{count => lists:sum(maps:values(Counts)), sum => Sum, max => High, counts => Counts,
      min => lowest(Counts)}.

%% The bucket slot of a value (0-based), as HdrHistogram computes it.
index(V) when V =< ?SUB_MASK -> V;
index(V) ->
    B = msb(V) - ?HALF_BITS,
    ((B + 1) bsl ?HALF_BITS) + (V bsr B) - ?HALF.

%% The position of the highest set bit of 2048 =< V < 2^32, by halving.
msb(V) when V >= 1 bsl 22 ->
    if V >= 1 bsl 27 -> msb_from(V, 27);
       true -> msb_from(V, 22)
    end;
msb(V) when V >= 1 bsl 16 -> msb_from(V, 16);
msb(V) -> msb_from(V, ?SUB_BITS).

msb_from(V, B) when V >= 1 bsl (B + 1) -> msb_from(V, B + 1);
msb_from(_V, B) -> B.

%% The lowest and highest value of a slot.
range(I) when I < 2 * ?HALF -> {I, I};
range(I) ->
    B = (I bsr ?HALF_BITS) - 1,
    Low = ((I band (?HALF - 1)) + ?HALF) bsl B,
    {Low, Low + (1 bsl B) - 1}.

%% @doc Snapshot and reset in one pass: every count taken is removed atomically, so a record
%% racing with it lands either in this snapshot or in the next.
-spec take(hist()) -> snapshot().
take(Ref) ->
    %% The maximum is reset first: a record raises it after adding its count, so a count that
    %% this scan misses has raised it again and the next take scans. An idle histogram (no
    %% record since the last take) is not scanned at all.
    case atomics:exchange(Ref, ?MAX, ?IDLE) of
        ?IDLE -> empty();
        Max0 ->
            %% Most slots are empty: only the flagged chunks are read, and only slots with
            %% counts written (reset), so that the once-a-second take does not take their cache
            %% lines from the recorders (`--resolution' takes up to ten times a second).
            {Counts, Count} = take_chunks(Ref, ?CHUNKS - 1, [], 0),
            Max = erlang:max(Max0, atomics:get(Ref, ?MAX)),
            snap(Counts, Count, atomics:exchange(Ref, ?SUM, 0), Max)
    end.

%% @doc Snapshot without resetting.
-spec snapshot(hist()) -> snapshot().
snapshot(Ref) ->
    {Counts, Count} = slots(Ref, ?SLOTS, [], 0),
    snap(Counts, Count, atomics:get(Ref, ?SUM), atomics:get(Ref, ?MAX)).

snap(Counts, Count, Sum, Max) ->
    #{count => Count, sum => Sum, max => erlang:max(0, Max), counts => Counts,
      min => lowest(Counts)}.

%% The chunks downwards, each flag reset before its pieces' flags are read, and each piece's
%% before its slots are (a record meanwhile sets them again: its count is taken now or by the
%% next take, never twice).
take_chunks(_Ref, -1, Acc, Count) -> {maps:from_list(Acc), Count};
take_chunks(Ref, C, Acc, Count) ->
    case atomics:exchange(Ref, ?MAX + 1 + C, 0) of
        0 -> take_chunks(Ref, C - 1, Acc, Count);
        _ -> {Acc1, Count1} = take_pieces(Ref, (C + 1) * (?HALF div ?PIECE) - 1,
                                          C * (?HALF div ?PIECE), Acc, Count),
             take_chunks(Ref, C - 1, Acc1, Count1)
    end.

%% Pieces `P' down to `Low' (0-based).
take_pieces(_Ref, P, Low, Acc, Count) when P < Low -> {Acc, Count};
take_pieces(Ref, P, Low, Acc, Count) ->
    case atomics:exchange(Ref, ?MAX + ?CHUNKS + 1 + P, 0) of
        0 -> take_pieces(Ref, P - 1, Low, Acc, Count);
        _ -> {Acc1, Count1} = take_slots(Ref, (P + 1) * ?PIECE, P * ?PIECE, Acc, Count),
             take_pieces(Ref, P - 1, Low, Acc1, Count1)
    end.

%% Slots `I' down to `Low' + 1 (1-based) with no intermediate list and no fun.
take_slots(_Ref, Low, Low, Acc, Count) -> {Acc, Count};
take_slots(Ref, I, Low, Acc, Count) ->
    case atomics:get(Ref, I) of
        0 -> take_slots(Ref, I - 1, Low, Acc, Count);
        _ -> N = atomics:exchange(Ref, I, 0),
             take_slots(Ref, I - 1, Low, [{I - 1, N} | Acc], Count + N)
    end.

slots(_Ref, 0, Acc, Count) -> {maps:from_list(Acc), Count};
slots(Ref, I, Acc, Count) ->
    case atomics:get(Ref, I) of
        0 -> slots(Ref, I - 1, Acc, Count);
        N -> slots(Ref, I - 1, [{I - 1, N} | Acc], Count + N)
    end.

%% The lowest value equivalent to the smallest recorded one (not kept exactly: that would cost
%% every record one more atomic read).
lowest(Counts) when map_size(Counts) =:= 0 -> undefined;
lowest(Counts) -> element(1, range(lists:min(maps:keys(Counts)))).

%% @doc The snapshot of nothing recorded.
-spec empty() -> snapshot().
empty() -> #{count => 0, sum => 0, max => 0, min => undefined, counts => #{}}.

%% @doc Merge two snapshots (as if all values had been recorded into one histogram).
-spec merge(snapshot(), snapshot()) -> snapshot().
merge(#{counts := C1} = A, #{counts := C2} = B) ->
    Counts = maps:fold(fun(I, N, Acc) -> maps:update_with(I, fun(M) -> M + N end, N, Acc) end,
                       C1, C2),
    #{count => count(A) + count(B), sum => sum(A) + sum(B), counts => Counts,
      max => erlang:max(max(A), max(B)), min => min_of(min(A), min(B))}.

%% @doc Merge a list of snapshots.
-spec merge([snapshot()]) -> snapshot().
merge(Snaps) -> lists:foldl(fun(S, Acc) -> merge(Acc, S) end, empty(), Snaps).

min_of(undefined, M) -> M;
min_of(M, undefined) -> M;
min_of(A, B) -> erlang:min(A, B).

%% @doc The value at percentile `P' (0..100): the highest value equivalent to the recorded value
%% of that rank, at most the maximum; 0 when empty. Within 1/1000 of the exact value.
-spec percentile(snapshot(), number()) -> non_neg_integer().
percentile(Snap, P) ->
    [V] = percentiles(Snap, [P]),
    V.

%% @doc The values at several percentiles, in their order: the buckets sorted once for all (a
%% run's summary asks each histogram for 7 to 20 of them).
-spec percentiles(snapshot(), [number()]) -> [non_neg_integer()].
percentiles(#{count := 0}, Ps) -> [0 || _ <- Ps];
percentiles(#{count := Count, counts := Counts, max := Max}, Ps) ->
    Sorted = lists:sort(maps:to_list(Counts)),
    [begin
         {_, High} = range(walk(Sorted, erlang:max(1, ceil(P / 100 * Count)))),
         erlang:min(High, Max)
     end || P <- Ps].

walk([{I, N} | _], Rank) when N >= Rank -> I;
walk([{_, N} | Rest], Rank) -> walk(Rest, Rank - N).

%% @doc How many recorded values are at most `V' (a bucket counts when its highest equivalent
%% value is: within 1/1000 of `V', as every figure here), e.g. Prometheus' cumulative buckets.
-spec at_most(snapshot(), number()) -> non_neg_integer().
at_most(#{counts := Counts}, V) ->
    maps:fold(fun(I, N, Acc) ->
                      case range(I) of
                          {_, High} when High =< V -> Acc + N;
                          _ -> Acc
                      end
              end, 0, Counts).

%% @doc The exact mean of the recorded values (0.0 when empty).
-spec mean(snapshot()) -> float().
mean(#{count := 0}) -> 0.0;
mean(#{count := C, sum := S}) -> S / C.

%% @doc The population standard deviation, each value taken at its bucket's midpoint (the
%% buckets are what is kept; a bucket is at most 1/1024 of its value wide) around the exact
%% mean; 0.0 when empty.
-spec stddev(snapshot()) -> float().
stddev(#{count := 0}) -> 0.0;
stddev(#{count := C, counts := Counts} = Snap) ->
    Mean = mean(Snap),
    Sq = maps:fold(fun(I, N, Acc) ->
                           {Low, High} = range(I),
                           D = (Low + High) / 2 - Mean,
                           Acc + N * D * D
                   end, 0.0, Counts),
    math:sqrt(Sq / C).

%% @doc The largest recorded value (0 when empty).
-spec max(snapshot()) -> non_neg_integer().
max(#{max := M}) -> M.

%% @doc The smallest recorded value, to within 1/1000 (rounded down).
-spec min(snapshot()) -> non_neg_integer() | undefined.
min(#{min := M}) -> M.

%% @doc How many values were recorded.
-spec count(snapshot()) -> non_neg_integer().
count(#{count := C}) -> C.

%% @doc The sum of the recorded values.
-spec sum(snapshot()) -> non_neg_integer().
sum(#{sum := S}) -> S.
