%% @doc Which records a target holds: record numbers 1..N are written in order, so a counter
%% hands out the next one to write and a random existing one to read. Shared by the processes
%% of the node under test through `persistent_term' (set once per start) and `atomics'.
-module(beamscale_target_keys).

-export([init/2, next/1, random/1, count/1]).

%% @doc Start counting for target `Name' from `Existing' records.
-spec init(atom(), non_neg_integer()) -> ok.
init(Name, Existing) ->
    Ref = atomics:new(1, [{signed, false}]),
    ok = atomics:put(Ref, 1, Existing),
    persistent_term:put({?MODULE, Name}, Ref).

%% @doc The number of the next record to write.
-spec next(atom()) -> pos_integer().
next(Name) -> atomics:add_get(ref(Name), 1, 1).

%% @doc The number of a random record written so far, or `none'.
-spec random(atom()) -> pos_integer() | none.
random(Name) ->
    case count(Name) of
        0 -> none;
        N -> rand:uniform(N)
    end.

%% @doc How many record numbers have been handed out (existing and being written).
-spec count(atom()) -> non_neg_integer().
count(Name) -> atomics:get(ref(Name), 1).

ref(Name) -> persistent_term:get({?MODULE, Name}).
