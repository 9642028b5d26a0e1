import math

# An unchanged CodinGame Mad Pod Racing script: read the track once, then 4 pod lines a turn.
laps = int(input())
checkpoint_count = int(input())
checkpoints = []
for _ in range(checkpoint_count):
    checkpoint_x, checkpoint_y = [int(j) for j in input().split()]
    checkpoints.append((checkpoint_x, checkpoint_y))

while True:
    pods = []
    for _ in range(2):
        x, y, vx, vy, angle, next_check_point_id = [int(j) for j in input().split()]
        pods.append((x, y, vx, vy, next_check_point_id))
    for _ in range(2):
        input()
    for x, y, vx, vy, next_id in pods:
        cx, cy = checkpoints[next_id]
        distance = math.hypot(cx - x, cy - y)
        thrust = 100 if distance > 1500 else 60
        print(f"{cx - 3 * vx} {cy - 3 * vy} {thrust} cg")
