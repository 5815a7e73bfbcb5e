%% @doc The one walker of a checked scenario's step tree: the only module that knows which
%% steps hold other steps (`loop', `transaction', `if', `repeat', `for', and a dynamic request
%% holding its request, a named request its request). Every check and rewrite of the steps
%% walks with it, so a check sees every step at any depth, and a new container is taught here
%% once. Pure.
-module(beamscale_load_steps).

-export([fold/3, map/2, body/1, set_body/2, times/1, all/1, think_ms/1, drain_s/1]).

-type step() :: beamscale_load_scenario:step().

%% A Tsung file's drain beyond its sessions' think times, and its bound (one hour).
-define(DRAIN_MARGIN_S, 10).
-define(MAX_DRAIN_S, 3600).

%% @doc `Fun(Step, Acc)' for every step of `Steps' at any depth, a container before its body.
-spec fold(fun((step(), Acc) -> Acc), Acc, [step()]) -> Acc.
fold(Fun, Acc, Steps) ->
    lists:foldl(fun(S, A) -> fold(Fun, Fun(S, A), body(S)) end, Acc, Steps).

%% @doc Every step, its body already mapped, replaced by the list of steps `Fun' gives (`[]'
%% drops it, `[Step]' keeps it); a dynamic request's request must stay one request.
-spec map(fun((step()) -> [step()]), [step()]) -> [step()].
map(Fun, Steps) -> lists:flatmap(fun(S) -> Fun(set_body(S, map(Fun, body(S)))) end, Steps).

%% @doc Every step of `Steps' at any depth, in order, a container before its body.
-spec all([step()]) -> [step()].
all(Steps) -> lists:reverse(fold(fun(S, Acc) -> [S | Acc] end, [], Steps)).

%% @doc The steps a step holds (`[]' for one that holds none).
-spec body(step()) -> [step()].
body({loop, _, S}) -> S;
body({transaction, _, S}) -> S;
body({'if', _, S}) -> S;
body({repeat, _, S, _}) -> S;
body({for, _, _, _, _, S}) -> S;
body({foreach, _, _, _, S}) -> S;
body({dyn, _, Request}) -> [Request];
%% A request with its name (`beamscale_load_reqname').
body({named, _, Request}) -> [Request];
%% A request with its tags (`beamscale_load_tags').
body({tagged, _, Request}) -> [Request];
body(_) -> [].

%% @doc How many times a step's body runs at most (an `if' counted as taken).
-spec times(step()) -> non_neg_integer().
times({loop, N, _}) -> N;
times({repeat, N, _, _}) -> N;
times({for, _, From, To, Incr, _}) -> max(0, (To - From) div Incr + 1);
%% A list variable holds at most 1000 values (`beamscale_load_extract').
times({foreach, _, _, _, _}) -> 1000;
times(_) -> 1.

%% @doc The longest the think times of `Steps' take (ms): each body counted as many times as it
%% runs at most (`times/1'), an exponential think time at its mean, a uniform one at its
%% maximum, one read from a variable as 0.
-spec think_ms([step()]) -> number().
think_ms(Steps) ->
    lists:sum([case S of
                   {think, D} -> dist_ms(D);
                   _ -> times(S) * think_ms(body(S))
               end || S <- Steps]).

dist_ms(Ms) when is_number(Ms) -> Ms;
dist_ms({constant, Ms}) -> Ms;
dist_ms({exponential, Mean}) -> Mean;
dist_ms({uniform, _Min, Max}) -> Max;
dist_ms(_) -> 0.

%% @doc The drain of a file whose load has no time limit (Tsung's waits for every session): the
%% longest session's think times and ?DRAIN_MARGIN_S (the default drain) for its requests, at
%% most ?MAX_DRAIN_S. The run ends as soon as its users are done: a long drain costs nothing.
-spec drain_s([[step()]]) -> pos_integer().
drain_s(Sessions) ->
    Think = lists:max([0 | [think_ms(S) || S <- Sessions]]),
    min(?MAX_DRAIN_S, ceil(Think / 1000) + ?DRAIN_MARGIN_S).

%% @doc A container step with its body replaced (`body/1''s inverse).
-spec set_body(step(), [step()]) -> step().
set_body({loop, N, _}, S) -> {loop, N, S};
set_body({transaction, Name, _}, S) -> {transaction, Name, S};
set_body({'if', C, _}, S) -> {'if', C, S};
set_body({repeat, N, _, W}, S) -> {repeat, N, S, W};
set_body({for, V, A, B, I, _}, S) -> {for, V, A, B, I, S};
set_body({foreach, V, In, F, _}, S) -> {foreach, V, In, F, S};
set_body({dyn, D, _}, [Request]) -> {dyn, D, Request};
set_body({named, N, _}, [Request]) -> {named, N, Request};
set_body({tagged, T, _}, [Request]) -> {tagged, T, Request};
set_body(Step, []) -> Step.
