%% @doc The coordinators of the amoc scenario running on this node (`amoc_coordinator''s
%% server). A coordinator is a plan of items `{N, Actions}' (N or a range `{Min, Max}'): every
%% N users added, each action
%% is called with `{coordinate, N}' (arity 1), the batch `[{Pid, Data}]' (2) or each distinct
%% pair of it (3); an item `{all, Actions}' gets every user added. After `Timeout' seconds with
%% no user added, at `reset/1' and at `stop/1' every item's actions get what is left
%% (`{timeout | reset | stop, Count}'), the `all' items after the others, as amoc orders them.
-module(beamscale_amoc_coordinator).
-behaviour(gen_server).

-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

%% @private
-spec init([]) -> {ok, map()}.
init([]) -> {ok, #{}}.

%% @private
-spec handle_call(term(), gen_server:from(), map()) -> {reply, term(), map()}.
handle_call({start, Name, _, _}, _From, Cs) when is_map_key(Name, Cs) -> {reply, error, Cs};
handle_call({start, Name, Plan, Timeout}, _From, Cs) ->
    case items(Plan) of
        {ok, Items} when Timeout =:= infinity; is_integer(Timeout), Timeout > 0 ->
            {reply, ok, Cs#{Name => #{items => Items, timeout => Timeout, timer => none}}};
        _ -> {reply, error, Cs}
    end;
handle_call({_, Name, _}, _From, Cs) when not is_map_key(Name, Cs) ->
    {reply, {error, {no_coordinator, Name}}, Cs};
handle_call({add, Name, User}, _From, Cs) ->
    #{items := Items} = C = maps:get(Name, Cs),
    {reply, ok, Cs#{Name := timer(Name, C#{items := [add(User, I) || I <- Items]})}};
handle_call({reset, Name, Event}, _From, Cs) ->
    C = flush(Event, maps:get(Name, Cs)),
    {reply, ok, case Event of
                    stop -> maps:remove(Name, Cs);
                    _ -> Cs#{Name := C}
                end}.

%% @private
-spec handle_cast(term(), map()) -> {noreply, map()}.
handle_cast(_Msg, Cs) -> {noreply, Cs}.

%% @private
-spec handle_info(term(), map()) -> {noreply, map()}.
handle_info({timeout, Ref, Name}, Cs) ->
    case Cs of
        #{Name := #{timer := Ref} = C} -> {noreply, Cs#{Name := flush(timeout, C)}};
        _ -> {noreply, Cs}
    end;
handle_info(_Msg, Cs) -> {noreply, Cs}.

%% A plan's items `{Size, Need, Actions, Batch}', the `all' ones last: `Size' is N, a range
%% `{Min, Max}' (each batch's N drawn in it, both ends included) or `all'.
items(Item) when is_tuple(Item) -> items([Item]);
items(Plan) when is_list(Plan) ->
    Items = [{Size, need(Size), actions(As), []} || {Size, As} <- Plan, size_ok(Size)],
    case length(Items) =:= length(Plan) andalso
        lists:all(fun({_, _, As, _}) -> As =/= error end, Items) of
        true -> {ok, [I || {S, _, _, _} = I <- Items, S =/= all]
                     ++ [I || {all, _, _, _} = I <- Items]};
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

add(User, {all, all, As, Batch}) -> {all, all, As, [User | Batch]};
add(User, {Size, Need, As, Batch}) when length(Batch) + 1 =:= Need ->
    _ = execute(As, coordinate, lists:reverse([User | Batch])),
    {Size, need(Size), As, []};
add(User, {Size, Need, As, Batch}) -> {Size, Need, As, [User | Batch]}.

flush(Event, #{items := Items} = C) ->
    _ = [execute(As, Event, lists:reverse(Batch)) || {_, _, As, Batch} <- Items],
    C#{items := [{Size, need(Size), As, []} || {Size, _, As, _} <- Items], timer := none}.

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
