%% @doc The coordinators of the amoc scenario running (`amoc_coordinator''s server): one server
%% for the whole run, on the node that runs the users or, over load nodes, on beamscale's own
%% node, which every load node reaches (`beamscale_amoc_node:coordinator/0'), so the users of
%% all the nodes are grouped together. A coordinator is a plan of items `{N, Actions}' (N or a
%% range `{Min, Max}'): every N users added, each action is called with `{coordinate, N}' (arity
%% 1), the batch `[{Pid, Data}]' (2) or each distinct pair of it (3); an item `{all, Actions}'
%% gets every user added. After `Timeout' seconds with no user added, at `reset/1' and at
%% `stop/1' every item's actions get what is left (`{timeout | reset | stop, Count}'), the `all'
%% items after the others, as amoc orders them.
%%
%% The actions are funs made by a node's `init/0': they run on that node, in an executor process
%% of the coordinator there (one at a time, in order), never in this server, so an action may
%% call the coordinator. Each node's `start' brings its own plan; the first node's runs the
%% actions, the next one's if that node goes down. A reset or stop answers once its actions ran
%% (or their node went down).
-module(beamscale_amoc_coordinator).
-behaviour(gen_server).

-export([call/1, figures/0, executor/1]).
-export_type([figures/0]).

%% Per coordinator: its users added, the groups its numbered items formed (by size: `2',
%% `2..3'), and how many times what was left went to its actions (timeout, reset, stop).
-type figures() :: #{term() => #{added := non_neg_integer(), groups := #{binary() => pos_integer()},
                                 timeout := non_neg_integer(), reset := non_neg_integer(),
                                 stop := non_neg_integer()}}.
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

%% @doc A request of `amoc_coordinator' to the run's server, wherever it is: `{error,
%% no_amoc_run}' when none runs, `{error, {coordinator_down, Node}}' when its node is gone.
-spec call(term()) -> term().
call(Request) ->
    case beamscale_amoc_node:coordinator() of
        local -> beamscale_amoc_server:call(?MODULE, Request);
        Hub ->
            try gen_server:call({?MODULE, Hub}, Request, infinity)
            catch exit:{noproc, _} -> {error, no_amoc_run};
                  exit:{{nodedown, _}, _} -> {error, {coordinator_down, Hub}}
            end
    end.

%% @private
-spec init([]) -> {ok, map()}.
init([]) -> {ok, #{coords => #{}, execs => #{}, pending => #{}, figures => #{}}}.

%% @doc The figures of the run's coordinators, stopped ones too (`#{}' when none runs here).
-spec figures() -> figures().
figures() ->
    case beamscale_amoc_server:call(?MODULE, figures) of
        #{} = Figures -> Figures;
        {error, no_amoc_run} -> #{}
    end.

%% @private
-spec handle_call(term(), gen_server:from(), map()) -> {reply, term(), map()} | {noreply, map()}.
handle_call(figures, _From, #{figures := F} = S) -> {reply, F, S};
handle_call({start, Name, Plan, Timeout}, {Pid, _}, S) ->
    case {items(Plan), Timeout} of
        {{ok, Items}, T} when T =:= infinity; is_integer(T), T > 0 ->
            started(Name, Items, T, node(Pid), S);
        _ -> {reply, error, S}
    end;
handle_call({_, Name, _}, _From, #{coords := Cs} = S) when not is_map_key(Name, Cs) ->
    {reply, {error, {no_coordinator, Name}}, S};
handle_call({add, Name, User}, _From, #{coords := Cs} = S) ->
    #{items := Items, added := Added} = C = maps:get(Name, Cs),
    {Items1, Jobs} = lists:unzip([add(User, II) || II <- lists:enumerate(Items)]),
    C1 = timer(Name, C#{items := Items1, added := Added + 1}),
    Groups = [label(Size) || [{I, coordinate, _}] <- Jobs, {Size, _, _} <- [lists:nth(I, Items)]],
    S1 = count(Name, fun(#{added := A, groups := G} = F) ->
                             F#{added := A + 1, groups := lists:foldl(fun bump/2, G, Groups)}
                     end, S),
    {reply, ok, run(Name, lists:append(Jobs), none, put_coord(Name, C1, S1))};
handle_call({reset, Name, Event}, From, #{coords := Cs} = S) ->
    {C, Jobs} = flush(Event, maps:get(Name, Cs)),
    S1 = run(Name, Jobs, From, put_coord(Name, C, flushed(Name, Event, S))),
    {noreply, case Event of
                  stop -> stop_coord(Name, S1);
                  _ -> S1
              end}.

%% @private
-spec handle_cast(term(), map()) -> {noreply, map()}.
handle_cast(_Msg, S) -> {noreply, S}.

%% @private
-spec handle_info(term(), map()) -> {noreply, map()}.
handle_info({timeout, Ref, Name}, #{coords := Cs} = S) ->
    case Cs of
        #{Name := #{timer := Ref} = C0} ->
            {C, Jobs} = flush(timeout, C0),
            {noreply, run(Name, Jobs, none, put_coord(Name, C, flushed(Name, timeout, S)))};
        _ -> {noreply, S}
    end;
handle_info({done, Ref}, #{pending := P} = S) ->
    case maps:take(Ref, P) of
        {{_Exec, From}, P1} -> gen_server:reply(From, ok), {noreply, S#{pending := P1}};
        error -> {noreply, S}
    end;
handle_info({'DOWN', Mon, process, Exec, Why}, #{execs := Es} = S) when is_map_key(Mon, Es) ->
    {Name, Es1} = maps:take(Mon, Es),
    _ = Why =:= normal orelse
        logger:warning("amoc_coordinator ~0tp: the node running its actions is gone (~0tp)",
                       [Name, Why]),
    {noreply, exec_down(Name, Exec, S#{execs := Es1})};
handle_info(_Msg, S) -> {noreply, S}.

%% The first start of `Name' makes it; a start from another node adds that node's plan (the same
%% items, the one that runs the actions if those before it are gone); a second from one node is
%% refused, as amoc's.
started(Name, Items, Timeout, Node, #{coords := Cs} = S) ->
    Sizes = [Size || {Size, _} <- Items],
    case Cs of
        #{Name := #{execs := Execs}} when is_map_key(Node, Execs) -> {reply, error, S};
        #{Name := #{items := Old}} when length(Old) =/= length(Sizes) -> {reply, error, S};
        #{Name := #{items := Old} = C} ->
            case [Size || {Size, _, _} <- Old] of
                Sizes -> {reply, ok, executor(Name, Node, Items, C, S)};
                _ -> {reply, error, S}
            end;
        #{} ->
            C = #{items => [{Size, need(Size), []} || Size <- Sizes], timeout => Timeout,
                  timer => none, execs => #{}, order => [], added => 0},
            F = #{added => 0, groups => #{}, timeout => 0, reset => 0, stop => 0},
            {reply, ok, executor(Name, Node, Items, C,
                                 S#{figures := (maps:get(figures, S))#{Name => F}})}
    end.

%% The figures of `Name' changed by `Fun'.
count(Name, Fun, #{figures := Fs} = S) -> S#{figures := Fs#{Name => Fun(maps:get(Name, Fs))}}.

flushed(Name, Event, S) -> count(Name, fun(F) -> bump(Event, F) end, S).

bump(Key, M) -> M#{Key => maps:get(Key, M, 0) + 1}.

label({Min, Max}) -> iolist_to_binary(io_lib:format("~b..~b", [Min, Max]));
label(N) -> integer_to_binary(N).

%% The executor of `Name' on `Node', with that node's actions.
executor(Name, Node, Items, #{execs := Execs, order := Order} = C, #{execs := Es} = S) ->
    {Pid, Mon} = spawn_monitor(Node, ?MODULE, executor, [self()]),
    Actions = [As || {_, As} <- Items],
    put_coord(Name, C#{execs := Execs#{Node => {Pid, Actions}}, order := Order ++ [Node]},
              S#{execs := Es#{Mon => Name}}).

%% @private An executor: runs the actions it is sent, in order, until its coordinator stops it
%% or its server goes.
-spec executor(pid()) -> ok.
executor(Hub) ->
    Mon = monitor(process, Hub),
    executor(Hub, Mon).

executor(Hub, Mon) ->
    receive
        {run, Ref, Jobs} ->
            _ = [execute(As, Type, Batch) || {As, Type, Batch} <- Jobs],
            Hub ! {done, Ref},
            executor(Hub, Mon);
        stop -> ok;
        {'DOWN', Mon, process, _, _} -> ok
    end.

put_coord(Name, C, #{coords := Cs} = S) -> S#{coords := Cs#{Name => C}}.

%% Jobs `[{ItemIndex, Type, Batch}]' sent to the first executor of `Name' still up; `From' (of a
%% reset or stop) answered when they ran, at once if there are none or no executor is left.
run(_Name, [], none, S) -> S;
run(_Name, [], From, S) -> gen_server:reply(From, ok), S;
run(Name, Jobs, From, #{coords := Cs, pending := P} = S) ->
    case maps:get(Name, Cs) of
        #{order := [Node | _], execs := Execs} ->
            {Pid, Actions} = maps:get(Node, Execs),
            Ref = make_ref(),
            Pid ! {run, Ref, [{lists:nth(I, Actions), Type, B} || {I, Type, B} <- Jobs]},
            case From of
                none -> S;
                _ -> S#{pending := P#{Ref => {Pid, From}}}
            end;
        #{order := []} ->
            logger:warning("amoc_coordinator ~0tp: no node left to run its actions", [Name]),
            run(Name, [], From, S)
    end.

%% A stopped coordinator: gone from here, its executors told to end once they ran its last jobs.
stop_coord(Name, #{coords := Cs} = S) ->
    #{execs := Execs, timer := Timer} = maps:get(Name, Cs),
    _ = Timer =:= none orelse erlang:cancel_timer(Timer),
    _ = [Pid ! stop || {Pid, _} <- maps:values(Execs)],
    S#{coords := maps:remove(Name, Cs)}.

%% An executor gone: its node no longer runs the actions, and what it was running is answered.
exec_down(Name, Exec, #{coords := Cs, pending := P} = S) ->
    {Gone, Left} = maps:fold(fun(_Ref, {E, From}, {G, L}) when E =:= Exec -> {[From | G], L};
                                (Ref, V, {G, L}) -> {G, L#{Ref => V}}
                             end, {[], #{}}, P),
    _ = [gen_server:reply(From, ok) || From <- Gone],
    S1 = S#{pending := Left},
    case Cs of
        #{Name := #{execs := Execs, order := Order} = C} ->
            Node = node(Exec),
            put_coord(Name, C#{execs := maps:remove(Node, Execs), order := Order -- [Node]}, S1);
        _ -> S1
    end.

%% A plan's items `{Size, Actions}', the `all' ones last: `Size' is N, a range `{Min, Max}'
%% (each batch's N drawn in it, both ends included) or `all'.
items(Item) when is_tuple(Item) -> items([Item]);
items(Plan) when is_list(Plan) ->
    Items = [{Size, actions(As)} || {Size, As} <- Plan, size_ok(Size)],
    case length(Items) =:= length(Plan) andalso
        lists:all(fun({_, As}) -> As =/= error end, Items) of
        true -> {ok, [I || {S, _} = I <- Items, S =/= all] ++ [I || {all, _} = I <- Items]};
        false -> error
    end;
items(_) -> error.

size_ok(all) -> true;
size_ok(N) when is_integer(N), N > 0 -> true;
size_ok({Min, Max}) when is_integer(Min), is_integer(Max), Min > 0, Max >= Min -> true;
size_ok(_) -> false.

need(all) -> all;
need({Min, Max}) -> Min - 1 + rand:uniform(Max - Min + 1);
need(N) -> N.

actions(F) when is_function(F) -> actions([F]);
actions(Fs) when is_list(Fs) ->
    case lists:all(fun(F) -> is_function(F, 1) orelse is_function(F, 2)
                                 orelse is_function(F, 3) end, Fs) of
        true -> Fs;
        false -> error
    end;
actions(_) -> error.

%% `User' added to each item (indexed): a batch full is a job for the executor.
add(User, {_I, {all, all, Batch}}) -> {{all, all, [User | Batch]}, []};
add(User, {I, {Size, Need, Batch}}) when length(Batch) + 1 =:= Need ->
    {{Size, need(Size), []}, [{I, coordinate, lists:reverse([User | Batch])}]};
add(User, {_I, {Size, Need, Batch}}) -> {{Size, Need, [User | Batch]}, []}.

flush(Event, #{items := Items} = C) ->
    Jobs = [{I, Event, lists:reverse(Batch)} || {I, {_, _, Batch}} <- lists:enumerate(Items)],
    {C#{items := [{Size, need(Size), []} || {Size, _, _} <- Items], timer := none}, Jobs}.

execute(Actions, Type, Batch) ->
    Event = {Type, length(Batch)},
    [safely(A, Event, Batch) || A <- Actions].

safely(A, Event, Batch) ->
    try
        case erlang:fun_info(A, arity) of
            {arity, 1} -> A(Event);
            {arity, 2} -> A(Event, Batch);
            {arity, 3} -> pairs(fun(U1, U2) -> A(Event, U1, U2) end, Batch)
        end
    catch Class:Why ->
        %% amoc goes on after a failed action; said here rather than kept quiet.
        logger:error("amoc_coordinator: an action raised ~ts:~0P", [Class, Why, 10])
    end.

%% amoc's distinct pairs: none ─► (undefined, undefined), one ─► (it, undefined).
pairs(F, []) -> F(undefined, undefined);
pairs(F, [U]) -> F(U, undefined);
pairs(F, Users) -> [F(A, B) || {I, A} <- lists:enumerate(Users), B <- lists:nthtail(I, Users)].

timer(_Name, #{timeout := infinity} = C) -> C;
timer(Name, #{timeout := S, timer := Old} = C) ->
    _ = Old =:= none orelse erlang:cancel_timer(Old),
    C#{timer := erlang:start_timer(S * 1000, self(), Name)}.
