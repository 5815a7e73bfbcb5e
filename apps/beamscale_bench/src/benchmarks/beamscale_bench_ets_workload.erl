%% @doc The workload of `ets_bench' (the ETS scalability study, 2013), pure: sizes, table options,
%% and the key and operation sequences drawn from a fixed seed.
%%
%% Sequences are binaries of 32-bit big-endian words, generated once for the whole run and then
%% cut into one contiguous chunk per worker (`split/2'): what the table holds after each phase
%% does not depend on how many workers there are. A binary is shared, not copied, when a worker
%% gets its chunk, and reading it costs less than walking a list of tuples. An access word is
%% `Key bsl 2 bor Op' with `Op' 0 (lookup), 1 (insert) or 2 (delete).
-module(beamscale_bench_ets_workload).

-export([sizes/1, key_range/1, insert_keys/2, operations/4, split/2, counts/1,
         inserted_by_access/1, delete_keys/2, words/1]).
-export([options/1, table_options/2, lock_counts/0]).
-export_type([table_type/0, option/0, mix/0]).

-type table_type() :: set | ordered_set.
%% The concurrency options of the study: r is read_concurrency, w write_concurrency, auto
%% {write_concurrency, auto}, dc and nodc {decentralized_counters, true | false}; {locks, N} is
%% read and write concurrency with N bucket locks (hash tables only).
-type option() :: none | r | w | rw | auto | r_auto | w_dc | w_nodc | auto_nodc
                | {locks, pos_integer()}.
%% The percentage of lookups in the access phase.
-type mix() :: 90 | 99 | 100.

%% The paper's sizes: 2^20 keys inserted, 2^24 operations, keys in 1..2^21.
-define(PAPER_KEYS, 1048576).
-define(PAPER_OPS, 16777216).
-define(LOOKUP, 0).
-define(INSERT, 1).
-define(DELETE, 2).

%% @doc Keys inserted and access operations of a size: long is the paper's, intermediate an
%% eighth of it, short a sixty-fourth.
-spec sizes(short | intermediate | long) -> {pos_integer(), pos_integer()}.
sizes(long) -> {?PAPER_KEYS, ?PAPER_OPS};
sizes(intermediate) -> {?PAPER_KEYS div 8, ?PAPER_OPS div 8};
sizes(short) -> {?PAPER_KEYS div 64, ?PAPER_OPS div 64}.

%% @doc Keys are drawn uniformly from 1..2 x the keys inserted (the paper's 2,097,152), so the
%% table is as dense at every size.
-spec key_range(pos_integer()) -> pos_integer().
key_range(Keys) -> 2 * Keys.

%% @doc `Keys' keys drawn uniformly from the key range, as one binary.
-spec insert_keys(integer(), pos_integer()) -> binary().
insert_keys(Seed, Keys) ->
    Range = key_range(Keys),
    draw(Keys, rand:seed_s(exsss, {Seed, 16#e75, 1}),
         fun(S0) -> rand:uniform_s(Range, S0) end).

%% @doc `Ops' access words: `Mix' % lookups, the rest inserts and deletes with equal chance.
-spec operations(integer(), pos_integer(), pos_integer(), mix()) -> binary().
operations(Seed, Ops, Range, Mix) ->
    %% One draw in 1..200 picks the kind: at most 2 x Mix is a lookup, above it odd is an insert
    %% and even a delete, so 1 % of updates still splits evenly.
    draw(Ops, rand:seed_s(exsss, {Seed, 16#e75, 2}),
         fun(S0) ->
                 {Kind, S1} = rand:uniform_s(200, S0),
                 {Key, S2} = rand:uniform_s(Range, S1),
                 Op = if Kind =< 2 * Mix -> ?LOOKUP;
                         Kind band 1 =:= 1 -> ?INSERT;
                         true -> ?DELETE
                      end,
                 {Key bsl 2 bor Op, S2}
         end).

%% @doc A sequence cut into `N' contiguous chunks of nearly equal length (sub-binaries).
-spec split(binary(), pos_integer()) -> [binary()].
split(Bin, N) ->
    Words = byte_size(Bin) div 4,
    Bounds = [I * Words div N || I <- lists:seq(0, N)],
    [binary:part(Bin, 4 * From, 4 * (To - From))
     || {From, To} <- lists:zip(lists:droplast(Bounds), tl(Bounds))].

%% @doc How many lookups, inserts and deletes an access sequence holds.
-spec counts(binary()) -> #{lookup := non_neg_integer(), insert := non_neg_integer(),
                            delete := non_neg_integer()}.
counts(Ops) -> counts(Ops, 0, 0, 0).

counts(<<W:32, Rest/binary>>, L, I, D) ->
    case W band 3 of
        ?LOOKUP -> counts(Rest, L + 1, I, D);
        ?INSERT -> counts(Rest, L, I + 1, D);
        ?DELETE -> counts(Rest, L, I, D + 1)
    end;
counts(<<>>, L, I, D) -> #{lookup => L, insert => I, delete => D}.

%% @doc The keys an access sequence inserts.
-spec inserted_by_access(binary()) -> [pos_integer()].
inserted_by_access(Ops) -> [W bsr 2 || W <- words(Ops), W band 3 =:= ?INSERT].

%% @doc What one worker deletes in the last phase: every key it inserted, in either phase, once.
%% Every key in the table was inserted by some worker, so the table ends empty.
-spec delete_keys(binary(), binary()) -> binary().
delete_keys(InsertKeys, Ops) ->
    << <<K:32>> || K <- lists:usort(words(InsertKeys) ++ inserted_by_access(Ops)) >>.

%% @doc The words of a sequence.
-spec words(binary()) -> [non_neg_integer()].
words(Bin) -> [W || <<W:32>> <= Bin].

%% @doc The concurrency options measured for a table type. `w' alone is each type's default
%% decentralized-counters setting (off for set, on for ordered_set), so only the other setting
%% is added.
-spec options(table_type()) -> [option()].
options(set) -> [none, r, w, rw, auto, r_auto, w_dc, auto_nodc];
options(ordered_set) -> [none, r, w, rw, auto, r_auto, w_nodc, auto_nodc].

%% @doc The `ets:new/2' options of a table type and concurrency option (a public table).
-spec table_options(table_type(), option()) -> [term()].
table_options(Type, Option) -> [Type, public | concurrency(Option)].

%% @doc The bucket-lock counts of the paper's section 6.1.
-spec lock_counts() -> [pos_integer()].
lock_counts() -> [16, 64, 256, 1024].

concurrency(none) -> [];
concurrency(r) -> [{read_concurrency, true}];
concurrency(w) -> [{write_concurrency, true}];
concurrency(rw) -> [{read_concurrency, true}, {write_concurrency, true}];
concurrency(auto) -> [{write_concurrency, auto}];
concurrency(r_auto) -> [{read_concurrency, true}, {write_concurrency, auto}];
concurrency(w_dc) -> [{write_concurrency, true}, {decentralized_counters, true}];
concurrency(w_nodc) -> [{write_concurrency, true}, {decentralized_counters, false}];
concurrency(auto_nodc) -> [{write_concurrency, auto}, {decentralized_counters, false}];
concurrency({locks, N}) ->
    [{read_concurrency, true}, {write_concurrency, {debug_hash_fixed_number_of_locks, N}}].

%% Appending to the binary being built is done in place by the runtime.
draw(N, State, Next) -> draw(N, State, Next, <<>>).

draw(0, _State, _Next, Acc) -> Acc;
draw(N, State0, Next, Acc) ->
    {W, State} = Next(State0),
    draw(N - 1, State, Next, <<Acc/binary, W:32>>).
