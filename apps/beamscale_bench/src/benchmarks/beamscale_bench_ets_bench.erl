%% @doc ets_bench: the benchmark of the ETS scalability study (2013), three phases timed apart.
%%
%% Arguments `[Type, Option, Mix, {Keys, Ops, Seed}]'. One worker per online scheduler; a set-up
%% call (untimed) draws the keys and operations from `Seed' (`beamscale_bench_ets_workload'),
%% creates the public table in an owner process that outlives the phases, and starts the workers
%% holding their chunks. Then `insert' (the workers insert `Keys' keys), `access' (`Ops'
%% operations, `Mix' % lookups, the rest inserts and deletes half and half) and `delete' (each
%% worker deletes every key it inserted) are timed, each in its own call, and a last untimed call
%% prints what is deterministic and stops everything.
%%
%% Which argument sets `bench_args/2' gives depends on the node's plain arguments (`erl
%% -ets_bench SET'): none gives a few (the default run); `matrix' every table type, concurrency
%% option and mix plus the bucket-lock counts; `reader_groups' the sets of the reader-group
%% figures (read and write concurrency). `-ets_bench_locks 64,256' names the lock counts,
%% `-ets_bench_seed N' changes the seed and `-ets_bench_divisor D' divides the sizes further (for
%% tests). The sets must not depend on the scheduler count (the sanity check compares them
%% across environments), so only what `ets:new/2' refuses outright is left out here; which lock
%% counts a runtime really gives is for the caller to find with `honoured/2' (a runtime with one
%% scheduler turns write concurrency off whatever was asked). See docs/studies/ets.md.
-module(beamscale_bench_ets_bench).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0]).
-export([arg_sets/4, accepted/2, honoured/2]).

-define(SEED, 20130925).
%% A worker or owner left behind by a failed iteration goes away after this long without work;
%% between two phases of a live iteration there is only an untimed call.
-define(IDLE_TIMEOUT, 600000).
-define(START_TIMEOUT, 60000).
-define(MIXES, [90, 99, 100]).

-type selection() :: default | matrix | reader_groups.

%% @doc The argument sets for a size (see the module doc for the selection).
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, _Conf) ->
    {Keys, Ops} = beamscale_bench_ets_workload:sizes(Version),
    Divisor = plain_int(ets_bench_divisor, 1),
    Size = {max(1, Keys div Divisor), max(1, Ops div Divisor), plain_int(ets_bench_seed, ?SEED)},
    arg_sets(selection(), Size, locks(), fun accepted/2).

%% @doc The argument sets of a selection with these lock counts, keeping those
%% `Accepted(Type, Option)' allows.
-spec arg_sets(selection(), tuple(), [pos_integer()], fun((atom(), term()) -> boolean())) ->
    [beamscale_bench:args()].
arg_sets(default, Size, _Locks, _Accepted) ->
    [[set, rw, 90, Size], [ordered_set, rw, 90, Size], [set, auto, 99, Size]];
arg_sets(matrix, Size, Locks, Accepted) ->
    Options = [[T, O, M, Size] || T <- [set, ordered_set], M <- ?MIXES,
                                  O <- beamscale_bench_ets_workload:options(T)],
    WithLocks = [[set, {locks, N}, M, Size] || M <- ?MIXES, N <- Locks],
    [A || [T, O | _] = A <- Options ++ WithLocks, Accepted(T, O)];
arg_sets(reader_groups, Size, _Locks, Accepted) ->
    [A || [T, O | _] = A <- [[T, rw, M, Size] || T <- [set, ordered_set], M <- ?MIXES],
          Accepted(T, O)].

%% @doc Whether `ets:new/2' of this runtime takes the table type and option.
-spec accepted(beamscale_bench_ets_workload:table_type(),
               beamscale_bench_ets_workload:option()) -> boolean().
accepted(Type, Option) ->
    created(Type, Option) =/= refused.

%% @doc Whether this runtime makes the table as asked: it takes the options, and for a lock
%% count the table has that many bucket locks (OTP 25 raises fewer than 64 to 64, and a runtime
%% with one scheduler turns write concurrency off).
-spec honoured(beamscale_bench_ets_workload:table_type(),
               beamscale_bench_ets_workload:option()) -> boolean().
honoured(Type, {locks, N} = Option) ->
    created(Type, Option) =:= {ok, {debug_hash_fixed_number_of_locks, N}};
honoured(Type, Option) ->
    accepted(Type, Option).

%% A table made and deleted at once: its write_concurrency as ets:info/2 gives it, or refused.
created(Type, Option) ->
    try ets:new(?MODULE, beamscale_bench_ets_workload:table_options(Type, Option)) of
        Tab ->
            Got = ets:info(Tab, write_concurrency),
            true = ets:delete(Tab),
            {ok, Got}
    catch error:badarg -> refused
    end.

%% @doc One step of an iteration: set-up, insert, access, delete, finish (see the module doc).
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> term().
run([#{step := Step} = State | _], _Peers, _Conf) ->
    step(Step, State);
run([Type, Option, Mix, {Keys, Ops, Seed}], _Peers, _Conf) ->
    setup(Type, Option, Mix, Keys, Ops, Seed).

-spec description() -> string().
description() ->
    "the ETS study's insert, access and delete phases on one public table (ETS options, locks)".

%%% Steps

setup(Type, Option, Mix, Keys, Ops, Seed) ->
    W = erlang:system_info(schedulers_online),
    Inserts = beamscale_bench_ets_workload:insert_keys(Seed, Keys),
    Access = beamscale_bench_ets_workload:operations(
               Seed, Ops, beamscale_bench_ets_workload:key_range(Keys), Mix),
    case start_owner(beamscale_bench_ets_workload:table_options(Type, Option)) of
        {ok, Owner, Tab} ->
            Chunks = lists:zip(beamscale_bench_ets_workload:split(Inserts, W),
                               beamscale_bench_ets_workload:split(Access, W)),
            %% Each worker's delete list is made here, so no worker is still busy with it when
            %% the first phase starts.
            Workers = [start_worker(Tab, #{insert => I, access => A, delete => delete_keys(I, A)})
                       || {I, A} <- Chunks],
            Facts = io_lib:format("ets_bench ~p ~0p ~b % lookups~n", [Type, Option, Mix]),
            {{continue, ignore}, #{step => insert, tab => Tab, owner => Owner,
                                   workers => Workers, mix => Mix, facts => Facts,
                                   counts => beamscale_bench_ets_workload:counts(Access)}};
        {error, Reason} ->
            io:format("ets_bench ~p ~0p: ~0p~n", [Type, Option, Reason]),
            {error, Reason}
    end.

step(insert, State) -> timed(insert, State, after_insert);
step(after_insert, State) -> size_fact("insert", State, access);
step(access, State) -> timed(access, State, after_access);
step(after_access, #{mix := 100, facts := Facts, counts := Counts} = State) ->
    size_fact("access", State#{facts := [Facts, access_fact(Counts)]}, delete);
step(after_access, #{facts := Facts, counts := Counts} = State) ->
    {{continue, ignore}, State#{step := delete, facts := [Facts, access_fact(Counts)]}};
step(delete, State) -> timed(delete, State, finish);
step(finish, State) ->
    #{facts := Facts} = size_fact_map("delete", State),
    io:put_chars(Facts),
    stop(State),
    {{done, ignore}, ok}.

%% Every worker does its part of the phase; the call returns when the last one is done, or
%% fails the iteration when one dies (the others and the table are stopped then).
timed(Phase, #{workers := Workers} = State, Next) ->
    Self = self(),
    Watched = [{W, monitor(process, W)} || W <- Workers],
    lists:foreach(fun(W) -> W ! {go, Phase, Self} end, Workers),
    case wait(Watched) of
        ok -> {{continue, Phase}, State#{step := Next}};
        {error, _} = Error -> stop(State), Error
    end.

wait([]) -> ok;
wait([{W, Ref} | Rest]) ->
    receive
        {done, W} -> demonitor(Ref, [flush]), wait(Rest);
        {'DOWN', Ref, process, W, Reason} -> {error, {worker_died, Reason}}
    end.

stop(#{owner := Owner, workers := Workers}) ->
    lists:foreach(fun(P) -> P ! stop end, [Owner | Workers]).

%% The table size after a phase, read in an untimed call: deterministic after insert and delete
%% (and after an access phase without updates), whatever the number of workers.
size_fact(Phase, State, Next) ->
    {{continue, ignore}, (size_fact_map(Phase, State))#{step := Next}}.

size_fact_map(Phase, #{tab := Tab, facts := Facts} = State) ->
    Line = io_lib:format("~s: ~b keys in the table~n", [Phase, ets:info(Tab, size)]),
    State#{facts := [Facts, Line]}.

access_fact(#{lookup := L, insert := I, delete := D}) ->
    io_lib:format("access: ~b lookups, ~b inserts, ~b deletes~n", [L, I, D]).

delete_keys(Inserts, Access) -> beamscale_bench_ets_workload:delete_keys(Inserts, Access).

%%% Processes

%% The table's owner lives across the phase calls (each is a fresh process) until `stop'.
start_owner(Opts) ->
    Parent = self(),
    {Pid, Ref} = spawn_monitor(fun() -> owner(Parent, Opts) end),
    receive
        {Pid, {ok, Tab}} -> demonitor(Ref, [flush]), {ok, Pid, Tab};
        {Pid, {error, _} = Error} -> demonitor(Ref, [flush]), Error;
        {'DOWN', Ref, process, Pid, Reason} -> {error, {owner_died, Reason}}
    after ?START_TIMEOUT -> exit(Pid, kill), {error, owner_timeout}
    end.

owner(Parent, Opts) ->
    try ets:new(?MODULE, Opts) of
        Tab ->
            Parent ! {self(), {ok, Tab}},
            receive stop -> ok after ?IDLE_TIMEOUT -> ok end
    catch error:badarg -> Parent ! {self(), {error, {refused, Opts}}}
    end.

start_worker(Tab, Work) ->
    spawn(fun() -> worker(Tab, Work) end).

worker(Tab, Work) ->
    receive
        {go, Phase, From} ->
            work(Phase, Tab, maps:get(Phase, Work)),
            From ! {done, self()},
            worker(Tab, Work);
        stop -> ok
    after ?IDLE_TIMEOUT -> ok
    end.

work(insert, Tab, <<K:32, Rest/binary>>) ->
    true = ets:insert(Tab, {K}),
    work(insert, Tab, Rest);
work(delete, Tab, <<K:32, Rest/binary>>) ->
    true = ets:delete(Tab, K),
    work(delete, Tab, Rest);
work(access, Tab, <<W:32, Rest/binary>>) ->
    access(W band 3, Tab, W bsr 2),
    work(access, Tab, Rest);
work(_Phase, _Tab, <<>>) ->
    ok.

access(0, Tab, K) -> _ = ets:lookup(Tab, K), ok;
access(1, Tab, K) -> true = ets:insert(Tab, {K}), ok;
access(2, Tab, K) -> true = ets:delete(Tab, K), ok.

%%% Plain arguments of the node under test

-spec selection() -> selection().
selection() ->
    case init:get_argument(ets_bench) of
        {ok, [["matrix"] | _]} -> matrix;
        {ok, [["reader_groups"] | _]} -> reader_groups;
        _ -> default
    end.

locks() ->
    case init:get_argument(ets_bench_locks) of
        {ok, [[Text] | _]} ->
            try [list_to_integer(N) || N <- string:lexemes(Text, ",")]
            catch error:badarg -> beamscale_bench_ets_workload:lock_counts()
            end;
        _ -> beamscale_bench_ets_workload:lock_counts()
    end.

plain_int(Flag, Default) ->
    case init:get_argument(Flag) of
        {ok, [[Text] | _]} ->
            try list_to_integer(Text) catch error:badarg -> Default end;
        _ -> Default
    end.
