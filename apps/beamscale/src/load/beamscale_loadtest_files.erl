%% @doc The open-file limit of the processes a load runs in, checked before the load: each user
%% holds a socket per request kind and server it talks to, and a process (beamscale's node, or
%% each load node) may hold at most its `ulimit -n' files. The users a node will hold at once
%% are estimated from the phases: users arrive at the phase's rate until its `max_users', and
%% each stays at least the sum of its session's think times (Little's law); a run whose
%% estimate passes the limit is refused with the number of load nodes it needs. A user that
%% still finds no file counts `emfile' as its own error reason, named with the limit at the end.
-module(beamscale_loadtest_files).

-export([check_nodes/2, check/3, limit/1, parse_limits/1, peak_users/1, sockets_per_user/1,
         needed_nodes/3,
         emfile_line/2, format_error/1]).

%% Files a node holds besides its users' sockets: distribution, epmd, standard I/O, the code
%% and the files it writes; a generous margin, the limit is far above it (20 000 here).
-define(RESERVED, 200).
%% Reading a load node's limit is one small erpc call.
-define(LIMIT_TIMEOUT, 5000).

%% @doc Read the limit of each process that holds users (the load nodes `Nodes', in the order
%% `beamscale_loadtest_nodes:start/2' gave them, or this node when there are none) and check the
%% scenario against them, each with its share of the arrivals; the smallest limit.
-spec check_nodes(beamscale_load_scenario:scenario(), [node()]) ->
    {ok, pos_integer() | infinity} | {error, {?MODULE, term()}}.
check_nodes(#{load_nodes := Where} = Scenario, Nodes) ->
    {Holders, Weights} = case Nodes of
                             [] -> {[node()], [1]};
                             _ -> {Nodes, beamscale_loadtest_nodes:weights(Where)}
                         end,
    case lists:partition(fun({ok, _}) -> true; (_) -> false end,
                         [limit(N) || N <- Holders]) of
        {Oks, []} ->
            Limits = [L || {ok, L} <- Oks],
            case check(Scenario, lists:zip(Limits, Weights), length(Nodes)) of
                ok -> {ok, lists:min(Limits)};
                {error, _} = Error -> Error
            end;
        {_, [Error | _]} -> Error
    end.

%% @doc Refuse a scenario whose users would pass the file limit of a node they run on:
%% `Holders' has the limit and the weight (share of the arrivals, relative) of each process that
%% holds users (this node's alone when `LoadNodes' is 0). A node holds the peak's users in
%% proportion to its weight, checked against its own limit; the error names the node most over.
-spec check(beamscale_load_scenario:scenario(), [{pos_integer() | infinity, number()}],
            non_neg_integer()) -> ok | {error, {?MODULE, term()}}.
check(Scenario, Holders, LoadNodes) ->
    Sockets = sockets_per_user(Scenario),
    Peak = peak_users(Scenario),
    Sum = lists:sum([W || {_, W} <- Holders]),
    Over = [{Files - (Limit - ?RESERVED), Files, Limit, W / Sum}
            || {Limit, W} <- Holders, Limit =/= infinity,
               Files <- [ceil(Peak * W / Sum) * Sockets], Files > Limit - ?RESERVED],
    case lists:reverse(lists:sort(Over)) of
        [] -> ok;
        [{_, Files, Limit, Share} | _] ->
            {error, {?MODULE, {too_many, #{users => Peak, sockets => Sockets, per_node => Files,
                                           limit => Limit, nodes => LoadNodes,
                                           share => Share,
                                           needed => needed_nodes(Peak * Sockets, Limit,
                                                                  LoadNodes)}}}}
    end.

%% @doc The open-file limit (soft) of the node `Node' (this node or a load node).
-spec limit(node()) -> {ok, pos_integer() | infinity} | {error, {?MODULE, term()}}.
limit(Node) ->
    try erpc:call(Node, file, read_file, ["/proc/self/limits"], ?LIMIT_TIMEOUT) of
        {ok, Text} -> parse_limits(Text);
        {error, Reason} -> {error, {?MODULE, {limits, Node, Reason}}}
    catch _:Reason -> {error, {?MODULE, {limits, Node, Reason}}}
    end.

%% @doc The soft `Max open files' of a `/proc/PID/limits' text.
-spec parse_limits(binary()) -> {ok, pos_integer() | infinity} | {error, {?MODULE, term()}}.
parse_limits(Text) ->
    Lines = [string:lexemes(L, " ") || L <- string:split(Text, "\n", all)],
    case [Soft || ["Max", "open", "files", Soft | _] <- [[binary_to_list(W) || W <- L]
                                                         || L <- Lines]] of
        ["unlimited"] -> {ok, infinity};
        [Soft] -> {ok, list_to_integer(Soft)};
        _ -> {error, {?MODULE, no_limit_line}}
    end.

%% @doc The users in flight at the busiest moment, estimated: phase `k' starts users at its
%% rate from its start until its end or its `max_users', and each stays the think times of its
%% session (the longest session's); the peak is at one of the instants where this changes.
-spec peak_users(beamscale_load_scenario:scenario()) -> non_neg_integer().
peak_users(#{phases := Phases, sessions := Sessions}) ->
    Stay = lists:max([think_s(Steps) || #{steps := Steps} <- Sessions]),
    %% Several scenarios: each from its own start.
    {Windows, _} = lists:mapfoldl(fun(#{duration_s := D, rate := R, max_users := Max} = P,
                                      After) ->
                                          From = maps:get(start_s, P, After),
                                          Len = case Max of
                                                    infinity -> D;
                                                    _ -> min(D, Max / R)
                                                end,
                                          {{From, From + Len, R}, From + D}
                                  end, 0, Phases),
    Instants = lists:append([[E, S + Stay, E + Stay] || {S, E, _} <- Windows]),
    round(lists:max([0 | [in_flight(T, Stay, Windows) || T <- Instants]])).

%% Users started in (T - Stay, T]: those still in flight at T.
in_flight(T, Stay, Windows) ->
    lists:sum([R * max(0, min(E, T) - max(S, T - Stay)) || {S, E, R} <- Windows]).

%% A session's think times in seconds (means; a loop's body as often as it runs, a `repeat' at
%% most, an `if' as if taken): the least time a user holds its sockets.
think_s(Steps) -> lists:sum([step_s(S) || S <- Steps]).

step_s({think, {constant, Ms}}) -> Ms / 1000;
step_s({think, {exponential, Ms}}) -> Ms / 1000;
step_s({think, {uniform, A, B}}) -> (A + B) / 2000;
step_s(S) -> beamscale_load_steps:times(S) * think_s(beamscale_load_steps:body(S)).

%% @doc The sockets one user may hold at once: per request kind and server its session talks
%% to, what the kind's `sockets/1' says (rpc goes over distribution and holds none); the
%% largest of the sessions.
-spec sockets_per_user(beamscale_load_scenario:scenario()) -> non_neg_integer().
sockets_per_user(#{sessions := Sessions} = Scenario) ->
    Targets = maps:get(targets, Scenario, #{}),
    lists:max([lists:sum([beamscale_load_kinds:sockets(Mod, maps:get(T, Targets, #{}))
                          || {Mod, T} <- lists:usort(conns(Steps))])
               || #{steps := Steps} <- Sessions]).

conns(Steps) ->
    [{Mod, Target} || {request, Mod, Target, _, _} <- beamscale_load_steps:all(Steps)].

%% @doc The load nodes that `Sockets' need so that none passes `Limit' (at least `Nodes' + 1).
-spec needed_nodes(non_neg_integer(), pos_integer(), non_neg_integer()) -> pos_integer().
needed_nodes(Sockets, Limit, Nodes) ->
    PerNode = max(Limit - ?RESERVED, 1),
    max(Nodes + 1, (Sockets + PerNode - 1) div PerNode).

%% @doc The closing line when users found no file (`emfile'), with the limit; `none' if none did.
-spec emfile_line(#{binary() => pos_integer()}, pos_integer() | infinity) -> iodata() | none.
emfile_line(Reasons, Limit) ->
    case lists:sum([N || {R, N} <- maps:to_list(Reasons),
                         binary:match(R, <<"emfile">>) =/= nomatch]) of
        0 -> none;
        N -> io_lib:format("~b connects failed with emfile: a process may hold ~ts open files "
                           "(ulimit -n); spread the users over more load_nodes~n",
                           [N, limit_text(Limit)])
    end.

limit_text(infinity) -> "unlimited";
limit_text(N) -> integer_to_list(N).

%% @doc One line for this module's errors.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({too_many, #{users := U, sockets := S, per_node := P, limit := L, nodes := N,
                          needed := Needed, share := Share}}) ->
    %% Equal weights: every node holds as many users; else the busiest is named by its share.
    Even = abs(Share * max(N, 1) - 1) < 1.0e-9,
    Which = case Even of true -> "each of "; false -> "the busiest of " end,
    [io_lib:format("about ~b users in flight at once (max_users and think times), ~b socket~ts "
                   "each: ~b open files in ~ts~ts~ts, above its limit of ~b (ulimit -n) less ~b "
                   "kept for the node itself; ",
                   [U, S, plural(S), P, Which, nodes_text(N), share_text(Even, Share), L,
                    ?RESERVED]),
     case Even of
         true -> io_lib:format("set load_nodes to at least ~b", [Needed]);
         false -> io_lib:format("give that host more nodes or less weight (a node's share at "
                                "most ~.1f %), or use at least ~b load nodes of equal weight",
                                [100 * (L - ?RESERVED) / max(U * S, 1), Needed])
     end];
format_error({limits, Node, Reason}) ->
    io_lib:format("cannot read the open-file limit of ~ts: ~0tp", [Node, Reason],
                  [{chars_limit, 300}]);
format_error(no_limit_line) -> "no \"Max open files\" line in /proc/self/limits".

share_text(true, _Share) -> "";
share_text(false, Share) -> io_lib:format(" (its share of the arrivals ~.1f %, by weight)",
                                          [100 * Share]).

plural(1) -> "";
plural(_) -> "s".

nodes_text(0) -> "1 process (beamscale's own node: load_nodes is 0)";
nodes_text(1) -> "1 load node";
nodes_text(N) -> io_lib:format("~b load nodes", [N]).
