%% @doc orbit_int: the orbit of 0 under a set of generators on the integers 0 .. N-1, computed
%% in a hash table spread over worker processes (and over the peer nodes, when there are any).
%%
%% The search goes by rounds (a level-synchronous breadth-first search): in each round every
%% worker applies the generators to the vertices it found new in the round before, sends every
%% worker its share of the images (possibly none) and keeps those it had not seen. A round ends
%% when every worker has had a share from every worker, so no count of messages in flight is
%% needed to know the search is over: it is when a round finds nothing new. With intra-worker
%% parallelism a worker applies the generators to chunks of its vertices in parallel processes.
-module(beamscale_bench_orbit_int).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, tags/0]).
-export([generators/1, image/3, owner/2]).

%% Vertices per process when a worker works in parallel.
-define(CHUNK, 32).

%% @doc `[Parallel, Generators, SpaceSize, Workers]' with and without intra-worker parallelism,
%% space and workers scaled with the logical cores as in bencherl.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    Cores = beamscale_bench_util:cores(Conf),
    {Gens, SpacePerCore, WorkersPerCore} =
        beamscale_bench_util:sized(Version, {{g13, 2000, 2}, {g124, 10000, 2},
                                             {g1245, 100000, 4}}),
    [[Par, Gens, SpacePerCore * Cores, WorkersPerCore * Cores] || Par <- [true, false]].

%% @doc Prints the size of the orbit. Workers go round-robin over this node and `Peers'.
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([Par, Gens, N, W | _], Peers, _Conf) ->
    Nodes = list_to_tuple([node() | Peers]),
    Master = self(),
    Job = #{gens => generators(Gens), n => N, w => W, par => Par, master => Master},
    Workers = list_to_tuple(
                [spawn_link(element(I rem tuple_size(Nodes) + 1, Nodes),
                            fun() -> worker_start(Job) end) || I <- lists:seq(0, W - 1)]),
    _ = [Pid ! {workers, Workers} || Pid <- tuple_to_list(Workers)],
    element(owner(0, W) + 1, Workers) ! {seed, 0},
    ok = rounds(Workers, 1),
    Sizes = [ask_size(Pid) || Pid <- tuple_to_list(Workers)],
    io:format("orbit_int: space ~b, ~b generators, orbit size ~b~n",
              [N, length(generators(Gens)), lists:sum(Sizes)]).

-spec description() -> string().
description() -> "orbit of a set of generators in a distributed hash table (messages, CPU, nodes)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

%% @doc The generators named by bencherl's generator sets.
-spec generators(g13 | g124 | g1245) -> [1..5].
generators(g13) -> [1, 3];
generators(g124) -> [1, 2, 4];
generators(g1245) -> [1, 2, 4, 5].

%% @doc Generator `G' applied to vertex `X' in a space of `N' vertices. Each one does some
%% work (a naive Fibonacci number that depends on `X') so that vertices cost CPU time.
-spec image(1..5, non_neg_integer(), pos_integer()) -> non_neg_integer().
image(1, X, N) -> (fib(15 + X rem 5) + 3 * X + 1) rem N;
image(2, X, N) -> (fib(16 + X rem 4) + X * X + 7) rem N;
image(3, X, N) -> (fib(14 + X rem 7) * 5 + 2 * X) rem N;
image(4, X, N) -> (fib(17 + X rem 3) + 17 * X + 3) rem N;
image(5, X, N) -> (fib(15 + X rem 6) + X div 2 + 11) rem N.

%% @doc The worker (0-based) that owns vertex `X' among `W'.
-spec owner(non_neg_integer(), pos_integer()) -> non_neg_integer().
owner(X, W) -> erlang:phash2(X, W).

%%% The master

%% Start rounds until one finds nothing new.
rounds(Workers, R) ->
    _ = [Pid ! {round, R} || Pid <- tuple_to_list(Workers)],
    New = lists:sum([receive {found, R, Pid, K} -> K end || Pid <- tuple_to_list(Workers)]),
    case New of
        0 -> ok;
        _ -> rounds(Workers, R + 1)
    end.

ask_size(Pid) ->
    Pid ! {size, self()},
    receive {size, Pid, Size} -> Size end.

%%% A worker

worker_start(Job) ->
    receive {workers, Workers} -> worker(Job#{workers => Workers}, #{}, []) end.

%% The master sends the seed before the first round, so the owner has it when the round starts.
worker(#{workers := Workers, master := Master} = Job, Seen, Frontier) ->
    receive
        {seed, X} ->
            worker(Job, Seen#{X => []}, [X | Frontier]);
        {round, R} ->
            share(R, images(Frontier, Job), Job),
            {Seen1, New} = gather(R, tuple_size(Workers), Seen, []),
            Master ! {found, R, self(), length(New)},
            worker(Job, Seen1, New);
        {size, From} ->
            From ! {size, self(), map_size(Seen)}
    end.

images(Frontier, #{par := false} = Job) -> images_seq(Frontier, Job);
images(Frontier, #{par := true} = Job) ->
    lists:append(beamscale_bench_util:fork_join(
                   [fun() -> images_seq(C, Job) end || C <- chunks(Frontier, ?CHUNK)])).

images_seq(Vertices, #{gens := Gens, n := N}) ->
    [image(G, X, N) || X <- Vertices, G <- Gens].

chunks([], _Size) -> [];
chunks(L, Size) when length(L) =< Size -> [L];
chunks(L, Size) ->
    {C, Rest} = lists:split(Size, L),
    [C | chunks(Rest, Size)].

%% Every worker gets its share of this round's images, an empty one too.
share(R, Images, #{workers := Workers, w := W}) ->
    Buckets = lists:foldl(fun(X, Acc) -> maps:update_with(owner(X, W), fun(L) -> [X | L] end,
                                                           [X], Acc)
                          end, #{}, Images),
    _ = [element(I + 1, Workers) ! {share, R, maps:get(I, Buckets, [])}
         || I <- lists:seq(0, W - 1)],
    ok.

gather(_R, 0, Seen, New) -> {Seen, New};
gather(R, Left, Seen, New) ->
    receive
        {share, R, Xs} ->
            {Seen1, New1} = lists:foldl(fun(X, {S, Acc}) ->
                                                case S of
                                                    #{X := _} -> {S, Acc};
                                                    _ -> {S#{X => []}, [X | Acc]}
                                                end
                                        end, {Seen, New}, Xs),
            gather(R, Left - 1, Seen1, New1)
    end.

fib(N) when N < 2 -> 1;
fib(N) -> fib(N - 1) + fib(N - 2).
