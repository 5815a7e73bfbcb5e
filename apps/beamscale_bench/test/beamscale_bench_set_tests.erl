%% Each built-in synthetic benchmark, run at its short size through the node-side runner (its
%% printed output captured as the executor captures it), against a result computed here another
%% way: by formula, by a direct loop or by a plain sequential search.
-module(beamscale_bench_set_tests).
-include_lib("eunit/include/eunit.hrl").

%% bench_args/2 as the executor calls it, on a host of this many cores.
-define(CORES, 2).
-define(MBROT_ITER, 255).
%% Each test runs real benchmarks: a second or so here, but on a host whose cores are taken by
%% other processes EUnit's 5 s default was passed (pcmark, beside a CPU hog per core).
-define(TEST_TIMEOUT_S, 60).

%% Every plain test of the module gets ?TEST_TIMEOUT_S (generators set their own).
eunit_wrapper_(Tests) ->
    [case T of
         {test, _, _} -> {timeout, ?TEST_TIMEOUT_S, T};
         _ -> T
     end || T <- Tests].

bang_test() ->
    [check(bang, Args, "bang: ~b messages, checksum ~b~n", [S * M, sum_to(S) * sum_to(M)])
     || [S, M] = Args <- short(bang)].

ehb_test() ->
    %% Every receiver gets `Loops' messages from each sender 1..20 of its group.
    [check(ehb, Args, "ehb: ~b messages, checksum ~b~n",
           [G * Size * Size * L, G * Size * sum_to(Size) * L])
     || [G, Size, L] = Args <- short(ehb)].

genstress_test_() ->
    {timeout, 60,
     fun() ->
             Sets = short(genstress),
             ?assertEqual([gen_server, proc], [K || [K | _] <- Sets]),
             [check(genstress, Args, "genstress: ~b calls, checksum ~b~n",
                    [C * Calls, sum_to(C) * sum_to(Calls)])
              || [_Kind, C, _Dummies, Calls] = Args <- Sets]
     end}.

mbrot_test() ->
    [check(mbrot, Args, "mbrot: ~b x ~b points, ~b in the set~n", [W, H, mandelbrot(W, H)])
     || [W, H] = Args <- short(mbrot)].

orbit_int_test_() ->
    {timeout, 60,
     fun() ->
             Sets = short(orbit_int),
             ?assertEqual([true, false], [P || [P | _] <- Sets]),
             [check(orbit_int, Args, "orbit_int: space ~b, ~b generators, orbit size ~b~n",
                    [N, length(beamscale_bench_orbit_int:generators(G)), bfs(G, N)])
              || [_Par, G, N, _W] = Args <- Sets]
     end}.

%% In a space of one vertex the orbit is that vertex, whatever the generators and workers.
orbit_int_one_vertex_test() ->
    check(orbit_int, [false, g13, 1, 3], "orbit_int: space ~b, ~b generators, orbit size ~b~n",
          [1, 2, 1]).

parallel_test() ->
    [check(parallel, Args, "parallel: ~b processes, ~b with ~b strictly increasing timestamps~n",
           [P, P, N])
     || [P, N] = Args <- short(parallel)].

pcmark_test() ->
    %% Process P adds P rem 7 + 1 to each of the 100 counters of each table.
    [begin
         Sum = 100 * lists:sum([P rem 7 + 1 || P <- lists:seq(1, Total)]),
         check(pcmark, Args, "pcmark: ~b processes, counter sums ~w~n",
               [Total, lists:duplicate(5, Sum)])
     end || [_Initial, Total] = Args <- short(pcmark)].

ran_test() ->
    [begin
         Halves = [lists:sublist(lists:sort(draws(I, D)), D div 2) || I <- lists:seq(1, P)],
         check(ran, Args, "ran: ~b integers, sum ~b~n",
               [P * (D div 2), lists:sum(lists:append(Halves))])
     end || [P, D] = Args <- short(ran)].

serialmsg_test() ->
    [check(serialmsg, Args, "serialmsg: ~b messages, element sum ~b~n",
           [R * M, lists:sum([M * L * (I rem 256) || I <- lists:seq(1, R)])])
     || [R, M, L] = Args <- short(serialmsg)].

timer_wheel_test() ->
    Sets = short(timer_wheel),
    ?assertEqual([wheel, no_wheel], [K || [K | _] <- Sets]),
    [check(timer_wheel, Args, "timer_wheel: ~b processes, ~b pongs, no timeouts~n",
           [N, N * (N - 1)])
     || [_Kind, N] = Args <- Sets].

%% Two timed phases; the PLT holds every module of erts; the PLT file is gone afterwards.
dialyzer_bench_test_() ->
    {timeout, 120,
     fun() ->
             Dir = tmp_dir(),
             [[PltApps, Apps] = Args] = short(dialyzer_bench),
             {ok, Timings, Out} = iteration(dialyzer_bench, Args, Dir),
             ?assertEqual(["build_plt", "analyse"], [P || {P, _} <- Timings]),
             Beams = lists:append([filelib:wildcard("*.beam", code:lib_dir(A, ebin))
                                   || A <- PltApps]),
             [First, Second] = string:lexemes(binary_to_list(Out), "\n"),
             ?assertEqual(lists:flatten(io_lib:format("dialyzer_bench: PLT of ~w has ~b modules",
                                                      [PltApps, length(Beams)])), First),
             ?assertMatch({match, _}, re:run(Second, "^dialyzer_bench: [0-9]+ warnings on "
                                             ++ re_quote(io_lib:format("~w", [Apps])))),
             ?assertEqual([], filelib:wildcard(filename:join(Dir, "*.plt")))
     end}.

%% Every benchmark module has a one-line description; the helpers that share the prefix
%% (without the behaviour) are not benchmarks.
descriptions_test() ->
    Builtin = [N || {N, _} <- beamscale_bench:builtin()],
    [begin
         D = beamscale_bench:describe(beamscale_bench:module(N)),
         ?assert(length(D) > 20 andalso not lists:member($\n, D))
     end || N <- Builtin],
    [?assertNot(lists:member(N, Builtin)) || N <- [util, ets_workload, runner, micro, probe]],
    ?assert(lists:member(dialyzer_bench, Builtin)),
    %% Every built-in one is a benchmark (`make run' runs them all): none lacks the callbacks.
    [begin
         ?assertEqual({module, M}, code:ensure_loaded(M)),
         ?assert(erlang:function_exported(M, bench_args, 2)),
         ?assert(erlang:function_exported(M, run, 3))
     end || {_, M} <- beamscale_bench:builtin()].

%% The quick preset's set is the benchmarks tagged `quick': bencherl's synthetic ones, not the
%% long dialyzer_bench or the ETS study's ets_bench.
quick_tag_test() ->
    Quick = beamscale_bench:tagged(quick),
    ?assert(length(Quick) >= 10),
    ?assert(lists:member(timer_wheel, Quick)),
    [?assertNot(lists:member(N, Quick)) || N <- [dialyzer_bench, ets_bench]].

%%% Helpers

short(Name) ->
    Conf = [{number_of_cores, ?CORES}, {slaves, []}],
    {ok, Sets} = beamscale_bench_runner:args(beamscale_bench:module(Name), short, Conf),
    ?assertNotEqual([], Sets),
    Sets.

check(Name, Args, Format, Values) ->
    {ok, [{Phase, Seconds}], Out} = iteration(Name, Args, tmp_dir()),
    ?assertEqual(atom_to_list(Name), Phase),
    ?assert(Seconds > 0),
    ?assertEqual(iolist_to_binary(io_lib:format(Format, Values)), Out).

iteration(Name, Args, Dir) ->
    beamscale_bench_runner:iteration(Name, beamscale_bench:module(Name), Args, [],
                                     [{datadir, Dir}, {master, node()}, {schedulers, 1}]).

tmp_dir() ->
    Dir = filename:join(["/tmp", "beamscale_bench_set_tests", os:getpid()]),
    ok = filelib:ensure_path(Dir),
    Dir.

sum_to(N) -> N * (N + 1) div 2.

re_quote(Text) -> re:replace(Text, "[][().*+?^$|\\\\{}]", "\\\\&", [global, {return, list}]).

%% The points of the W x H grid over [-2, 1] x [-1.5, 1.5] whose orbit stays within radius 2.
mandelbrot(W, H) ->
    length([{X, Y} || Y <- lists:seq(0, H - 1), X <- lists:seq(0, W - 1),
                      bounded(-2.0 + 3.0 * X / W, -1.5 + 3.0 * Y / H)]).

bounded(CRe, CIm) -> bounded(CRe, CIm, 0.0, 0.0, ?MBROT_ITER).

bounded(_CRe, _CIm, _Re, _Im, 0) -> true;
bounded(CRe, CIm, Re, Im, K) ->
    case Re * Re + Im * Im > 4.0 of
        true -> false;
        false -> bounded(CRe, CIm, Re * Re - Im * Im + CRe, 2.0 * Re * Im + CIm, K - 1)
    end.

%% The orbit of 0 by a plain breadth-first search with one queue and one set.
bfs(G, N) ->
    Gens = beamscale_bench_orbit_int:generators(G),
    bfs(queue:from_list([0]), sets:from_list([0], [{version, 2}]), Gens, N).

bfs(Queue, Seen, Gens, N) ->
    case queue:out(Queue) of
        {empty, _} -> sets:size(Seen);
        {{value, X}, Q} ->
            New = [Y || Y <- lists:usort([beamscale_bench_orbit_int:image(Gen, X, N)
                                          || Gen <- Gens]),
                        not sets:is_element(Y, Seen)],
            bfs(queue:join(Q, queue:from_list(New)),
                lists:foldl(fun sets:add_element/2, Seen, New), Gens, N)
    end.

%% The integers process I of ran draws, from its own seed.
draws(I, D) ->
    {Xs, _} = lists:mapfoldl(fun(_, S) -> rand:uniform_s(1000000, S) end,
                             rand:seed_s(exsss, {I, 7919, 104729}), lists:seq(1, D)),
    Xs.
